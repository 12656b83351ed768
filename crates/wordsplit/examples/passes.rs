//! The core's encode speed without Python, in five regimes: first passes over a text (each
//! on a new thread, so no piece is cached); first passes with 64 MiB of memory written
//! before each megabyte of documents, untimed (the regime of `benches/bench.py`'s one-pass
//! section, where the contenders take turns a block of documents at a time and each block
//! starts with the CPU's caches full of the others' data); passes back to back (everything
//! cached and in the CPU's caches); passes with 64 MiB written before each (everything
//! cached, but the CPU's caches hold other data: the regime of the bench's warm medians);
//! and passes after reads scattered over 128 MiB of small pages (what a garbage collection
//! over a large heap leaves: the CPU's caches and its TLB hold other data).
//!
//! ```text
//! cargo run --release -p wordsplit --example passes -- VOCAB TEXT [MEGABYTES] [PASSES] [REGIMES]
//! cargo run --release -p wordsplit --example passes -- cl100k_base corpus/prose.txt.gz 1 9
//! cargo run --release -p wordsplit --example passes -- cl100k_base corpus/code.txt.gz 1 40 walked
//! ```
//!
//! VOCAB is a bundled tiktoken-format vocabulary (`cl100k_base`, `o200k_base`, `qwen3`, ...);
//! TEXT a UTF-8 file (gzipped or not), of which the first MEGABYTES (default 1) are cut into
//! documents of about 10 KB at line ends, each encoded in its own call, as the bench does.
//! REGIMES: some of `first,turns,back,swept,walked` (default all). Prints MB/s per pass,
//! fastest first.

use std::path::Path;
use std::time::Instant;

use wordsplit::formats::{read_file, read_named};
use wordsplit::Tokenizer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [vocab, text, rest @ ..] = &args[..] else {
        return Err("usage: passes VOCAB TEXT [MEGABYTES] [PASSES] [REGIMES]".into());
    };
    let megabytes: f64 = rest.first().map_or(Ok(1.0), |s| s.parse())?;
    let passes: usize = rest.get(1).map_or(Ok(9), |s| s.parse())?;
    let regimes = rest.get(2).map_or(REGIMES, String::as_str);
    if let Some(unknown) = regimes
        .split(',')
        .find(|r| !REGIMES.split(',').any(|k| k == *r))
    {
        return Err(format!("unknown regime {unknown:?}; the regimes are {REGIMES}").into());
    }
    // The passes of a regime, or none when it is not asked for.
    let runs = |regime: &str| {
        if regimes.split(',').any(|r| r == regime) {
            passes
        } else {
            0
        }
    };
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/vocabs");
    let ranks = read_file(&data.join(format!("{vocab}.tiktoken.gz")))?;
    let tok = Tokenizer::from_vocab(read_named(vocab, &ranks)?)?;
    let docs = documents(&String::from_utf8(read_file(Path::new(text))?)?, megabytes);
    let bytes: usize = docs.iter().map(String::len).sum();

    let encode = |docs: &[String]| -> Result<(), wordsplit::Error> {
        for doc in docs {
            std::hint::black_box(tok.encode_ordinary(doc)?);
        }
        Ok(())
    };
    let pass = || -> Result<f64, wordsplit::Error> {
        let start = Instant::now();
        encode(&docs)?;
        Ok(bytes as f64 / start.elapsed().as_secs_f64() / 1e6)
    };
    // Written between passes, and between the blocks of a pass in turns: more than the
    // CPU's last-level cache holds.
    let mut other = vec![0u8; 64 << 20];
    let sweep = |other: &mut Vec<u8>| {
        other.iter_mut().for_each(|b| *b = b.wrapping_add(1));
        std::hint::black_box(&other);
    };
    // A pass timed a block of documents at a time, `other` written before each block. As in
    // the bench, a short text is encoded first, untimed: the thread's piece cache is made
    // then (a copy of the vocabulary's seeds), not in the first block.
    let pass_in_turns = |other: &mut Vec<u8>| -> Result<f64, wordsplit::Error> {
        tok.encode_ordinary("hello world")?;
        let mut seconds = 0.0;
        for block in blocks(&docs, TURN_BYTES) {
            sweep(other);
            let start = Instant::now();
            encode(block)?;
            seconds += start.elapsed().as_secs_f64();
        }
        Ok(bytes as f64 / seconds / 1e6)
    };
    sweep(&mut other);
    println!(
        "{vocab}, {} documents, {bytes} bytes: MB/s per pass, fastest first",
        docs.len()
    );
    // A first pass on a new thread starts with an empty piece cache (the caches are per
    // thread), so each of these is a first pass; the vocabulary's tables are shared.
    let mut first = (0..runs("first"))
        .map(|_| std::thread::scope(|s| s.spawn(pass).join().expect("a pass panicked")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut in_turns = Vec::with_capacity(passes);
    for _ in 0..runs("turns") {
        let other = &mut other;
        let speed = std::thread::scope(|s| {
            s.spawn(|| pass_in_turns(other))
                .join()
                .expect("a pass panicked")
        })?;
        in_turns.push(speed);
    }
    pass()?; // this thread's first pass: the caches now hold every piece
    let mut back_to_back = (0..runs("back"))
        .map(|_| pass())
        .collect::<Result<Vec<_>, _>>()?;
    let mut swept = Vec::with_capacity(passes);
    for _ in 0..runs("swept") {
        sweep(&mut other);
        swept.push(pass()?);
    }
    let mut walked = Vec::with_capacity(passes);
    if runs("walked") > 0 {
        let heap = vec![1u64; HEAP_WORDS];
        for _ in 0..passes {
            walk(&heap);
            walked.push(pass()?);
        }
    }
    for (name, speeds) in [
        ("first passes", &mut first),
        ("first, turns", &mut in_turns),
        ("back to back", &mut back_to_back),
        ("swept", &mut swept),
        ("walked", &mut walked),
    ] {
        if speeds.is_empty() {
            continue;
        }
        speeds.sort_by(|a, b| b.total_cmp(a));
        let shown: Vec<String> = speeds.iter().map(|s| format!("{s:.0}")).collect();
        println!("{name:<12} {}", shown.join(" "));
    }
    Ok(())
}

/// The regimes, in the order they run.
const REGIMES: &str = "first,turns,back,swept,walked";

/// The words of the heap [`walk`] reads: 128 MiB, more than the last-level cache holds and
/// more pages than the TLB maps (of 4 KB where, as on Linux's default `madvise` policy,
/// transparent huge pages are given only to memory that asks for them, which this does not).
const HEAP_WORDS: usize = 16 << 20;

/// Reads a word in each of a million lines of `heap` spread over all of it (a linear
/// congruential sequence of lines, so each read's address does not wait on the one before),
/// as a garbage collector's walk over the objects of a large heap does.
fn walk(heap: &[u64]) {
    let lines = heap.len() / 4;
    let mut line = 12_345usize;
    let mut sum = 0u64;
    for _ in 0..1 << 20 {
        line = line
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407)
            % lines;
        sum = sum.wrapping_add(heap[line * 4]);
    }
    std::hint::black_box(sum);
}

/// The bytes of documents a pass in turns encodes between two writes of other memory (the
/// bench's one-pass blocks are 1 MB).
const TURN_BYTES: usize = 1_000_000;

/// `docs` in consecutive blocks of at least `size` bytes (the last one maybe fewer).
fn blocks(docs: &[String], size: usize) -> Vec<&[String]> {
    let mut blocks = Vec::new();
    let (mut first, mut bytes) = (0, 0);
    for (i, doc) in docs.iter().enumerate() {
        bytes += doc.len();
        if bytes >= size || i + 1 == docs.len() {
            blocks.push(&docs[first..=i]);
            (first, bytes) = (i + 1, 0);
        }
    }
    blocks
}

/// The first `megabytes` of `text` as documents of about 10 KB, each ending at a line end.
fn documents(text: &str, megabytes: f64) -> Vec<String> {
    let limit = (megabytes * 1e6) as usize;
    let mut docs = Vec::new();
    let mut rest = text;
    let mut taken = 0;
    while !rest.is_empty() && taken < limit {
        let cut = rest
            .char_indices()
            .skip(10_000)
            .find(|&(_, c)| c == '\n')
            .map_or(rest.len(), |(i, _)| i + 1);
        docs.push(rest[..cut].to_string());
        taken += cut;
        rest = &rest[cut..];
    }
    docs
}
