//! The merge of pieces no cache holds, alone: nanoseconds per piece for the buffer-sweep
//! (what the `auto` encoder runs on short pieces) over the distinct words of a text that
//! are not tokens, each merged once. Merging such pieces is about a quarter of a first pass
//! over prose and more of one over multilingual text; this times it without the scan, the
//! caches and the Python boundary, in two regimes: the vocabulary's tables in the CPU's
//! caches (a pass right after another) and out of them (256 MiB written before the pass).
//!
//! ```text
//! cargo run --release -p wordsplit --example merges -- VOCAB TEXT [PASSES]
//! cargo run --release -p wordsplit --example merges -- cl100k_base corpus/prose.txt.gz 5
//! ```
//!
//! VOCAB is a bundled tiktoken-format vocabulary; TEXT a UTF-8 file (gzipped or not). The
//! pieces are its words with the space before them (as these vocabularies' patterns cut
//! most words) of 2 to 16 bytes that are not tokens. Prints the median of PASSES (default
//! 5) passes of each regime.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use wordsplit::encoders::buffer_sweep;
use wordsplit::formats::{read_file, read_named};
use wordsplit::Tokenizer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [vocab, text, rest @ ..] = &args[..] else {
        return Err("usage: merges VOCAB TEXT [PASSES]".into());
    };
    let passes: usize = rest.first().map_or(Ok(5), |s| s.parse())?;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/vocabs");
    let ranks = read_file(&data.join(format!("{vocab}.tiktoken.gz")))?;
    let tok = Tokenizer::from_vocab(read_named(vocab, &ranks)?)?;
    let tables = tok.pipeline().tables();
    let text = String::from_utf8(read_file(Path::new(text))?)?;
    let mut seen = HashSet::new();
    let pieces: Vec<Vec<u8>> = text
        .split(|c: char| c.is_whitespace() || c.is_ascii_punctuation())
        .map(|word| format!(" {word}").into_bytes())
        .filter(|p| (2..=16).contains(&p.len()) && tok.token_to_id(p).is_none())
        .filter(|p| seen.insert(p.clone()))
        .collect();
    let bytes: usize = pieces.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(16 * pieces.len());
    let mut pass = || {
        out.clear();
        let start = Instant::now();
        for piece in &pieces {
            buffer_sweep::encode(tables, piece, &mut out);
        }
        start.elapsed().as_nanos() as f64 / pieces.len() as f64
    };
    pass(); // the tables' rows and lines that merging these pieces reads, made and loaded
    let mut other = vec![0u8; 256 << 20];
    let mut in_cache = Vec::with_capacity(passes);
    let mut swept = Vec::with_capacity(passes);
    for _ in 0..passes {
        in_cache.push(pass());
        other.iter_mut().for_each(|b| *b = b.wrapping_add(1));
        std::hint::black_box(&other);
        swept.push(pass());
    }
    println!(
        "{vocab}: {} pieces, {:.1} bytes and {:.2} ids each; ns per piece, median of {passes}",
        pieces.len(),
        bytes as f64 / pieces.len() as f64,
        out.len() as f64 / pieces.len() as f64,
    );
    for (name, times) in [
        ("tables in cache", &mut in_cache),
        ("tables swept", &mut swept),
    ] {
        times.sort_by(f64::total_cmp);
        println!("{name:<16} {:.0}", times[times.len() / 2]);
    }
    Ok(())
}
