#![doc = include_str!("../README.md")]

pub mod arrow;
pub mod batch;
mod char_merges;
mod code_points;
pub mod cpu;
pub mod decode;
pub mod decode_pieces;
pub mod decode_text;
pub mod documents;
pub mod encoders;
pub mod error;
pub mod explain;
pub mod formats;
mod huge_pages;
pub mod literal;
#[rustfmt::skip]
pub mod names;
pub mod normalizers;
pub mod pipeline;
pub mod post_process;
pub mod spanners;
pub mod spec;
pub mod tables;
#[cfg(test)]
mod testing;
pub mod tokenizer;
pub mod train;
pub mod unicode_tables;

pub use encoders::{Encoder, EncoderKind};
pub use error::{Error, Stage};
pub use literal::Literal;
pub use normalizers::{NormalizeStage, Normalizer};
pub use pipeline::{EncodeStage, Pipeline, PipelineBuilder, SpanStage, SpecialPolicy};
pub use spanners::{Scanner, Spanner};
pub use tables::MergeTables;
pub use tokenizer::Tokenizer;
