//! The native Unigram encoder's speed without Python or the normalizer: a SentencePiece
//! `.model`'s pieces searched over a text's documents in sentencepiece's arithmetic (the
//! `sentencepiece` style, byte fallback on), each document one piece as a `.model`'s
//! pipeline hands it over. Prints MB/s (of thread CPU time) per pass, fastest first, and a checksum of every id
//! (equal before and after a change of the encoder, or an id changed).
//!
//! ```text
//! cargo run --release -p wordsplit --example unigram_passes -- MODEL TEXT [MEGABYTES] [PASSES]
//! cargo run --release -p wordsplit --example unigram_passes -- xlmr-class.model corpus/prose.txt.gz 1 5
//! ```
//!
//! MODEL is a `.model` file (gzipped or not); TEXT a UTF-8 file (gzipped or not), of which the
//! first MEGABYTES (default 1) are cut into documents of about 16 KB at line ends. Each
//! document is normalized as a model without a character map does it (runs of whitespace
//! one space, none at the ends, a space in front, every space `▁`): a model with a character
//! map (ALBERT's nmt_nfkc) is searched over text its map would have changed in places, which
//! times the search as well.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use wordsplit::encoders::unigram::{Style, Unigram};
use wordsplit::encoders::Encoder;
use wordsplit::formats::read_file;
use wordsplit::formats::sentencepiece::read_pieces;
use wordsplit::MergeTables;

/// sentencepiece's piece types: the searched ones, the unknown one and the bytes.
const NORMAL: u8 = 1;
const UNKNOWN: u8 = 2;
const USER_DEFINED: u8 = 4;
const BYTE: u8 = 6;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, text, rest @ ..] = &args[..] else {
        return Err("usage: unigram_passes MODEL TEXT [MEGABYTES] [PASSES]".into());
    };
    let megabytes: f64 = rest.first().map_or(Ok(1.0), |s| s.parse())?;
    let passes: usize = rest.get(1).map_or(Ok(5), |s| s.parse())?;
    let data = read_file(Path::new(model))?;
    let pieces = read_pieces(&data).ok_or("not a ModelProto")?.pieces;
    let started = Instant::now();
    let tokens = pieces.iter().enumerate().filter_map(|(id, p)| {
        let searched = matches!(p.kind, NORMAL | USER_DEFINED | BYTE);
        searched.then_some((p.text.as_bytes(), id as u32))
    });
    let tables = MergeTables::from_tokens(tokens, &[], pieces.len(), None, false)?;
    let scores: Vec<f64> = pieces.iter().map(|p| f64::from(p.score)).collect();
    let unk = pieces
        .iter()
        .position(|p| p.kind == UNKNOWN)
        .map(|i| i as u32);
    let style = Style::SentencePiece;
    let model = Unigram::with_style(Arc::new(tables), style, &scores, unk, true, "model")?;
    println!("built in {:.3} s", started.elapsed().as_secs_f64());
    let docs = documents(&String::from_utf8(read_file(Path::new(text))?)?, megabytes);
    let bytes: usize = docs.iter().map(String::len).sum();
    let (mut speeds, mut checksum, mut out) = (vec![], 0u64, Vec::new());
    for pass in 0..passes {
        let started = cpu_seconds();
        for doc in &docs {
            out.clear();
            model.encode_piece(doc.as_bytes(), &mut out)?;
            if pass == 0 {
                checksum = out.iter().fold(checksum, |h, &id| {
                    (h ^ u64::from(id)).wrapping_mul(0x100_0000_01b3)
                });
            }
        }
        speeds.push(bytes as f64 / (cpu_seconds() - started) / 1e6);
    }
    speeds.sort_by(|a, b| b.total_cmp(a));
    let shown: Vec<String> = speeds.iter().map(|s| format!("{s:.1}")).collect();
    println!(
        "{bytes} bytes in {} documents; ids {checksum:016x}",
        docs.len()
    );
    println!("MB/s: {}", shown.join(" "));
    Ok(())
}

/// The CPU time of this thread so far, in seconds (a loaded machine's other jobs do not
/// count in it, as they do in wall time).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The first `megabytes` of `text` in documents of about 16 KB cut at line ends, each
/// normalized (see the module docs).
fn documents(text: &str, megabytes: f64) -> Vec<String> {
    let limit = (megabytes * 1e6) as usize;
    let mut docs = Vec::new();
    let mut rest = text;
    let mut taken = 0;
    while !rest.is_empty() && taken < limit {
        let cut = rest
            .char_indices()
            .skip(16_000)
            .find(|&(_, c)| c == '\n')
            .map_or(rest.len(), |(i, _)| i + 1);
        let words: Vec<&str> = rest[..cut].split_whitespace().collect();
        docs.push(format!("▁{}", words.join("▁")));
        taken += cut;
        rest = &rest[cut..];
    }
    docs
}
