//! [`Literal`]: a special or added token, matched in text as a whole and never merged. The
//! readers in [`crate::formats`] make them, [`MergeTables`](crate::MergeTables) gives them
//! their ids' bytes and the [`Pipeline`](crate::Pipeline) finds them in text.
//!
//! ```
//! use wordsplit::literal::{Literal, NORMALIZED, RSTRIP};
//!
//! let think = Literal { text: "<think>".into(), id: 151667, special: false, flags: RSTRIP | NORMALIZED };
//! assert_eq!(think.flags, 10); // one bit per flag
//! ```

/// A special or added token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    /// The token's text (its UTF-8 bytes are what it decodes to, unless its id is a BPE token's).
    pub text: String,
    /// Its id; it may be a BPE token's id (HF gives an added token that is also in the model's
    /// vocab that entry's id).
    pub id: u32,
    /// Special tokens follow the allowed/disallowed policy; added tokens always match.
    pub special: bool,
    /// HF's added-token flags: bits [`LSTRIP`], [`RSTRIP`], [`SINGLE_WORD`], [`NORMALIZED`],
    /// and llama.cpp's [`C_SPACE`] (the same bits as the Python package's
    /// `Vocab.literal_flags`); 0 for a plain literal.
    pub flags: u8,
}

/// The whitespace before the token is part of its match (HF's `lstrip`).
pub const LSTRIP: u8 = 1;
/// The whitespace after the token is part of its match (HF's `rstrip`).
pub const RSTRIP: u8 = 2;
/// The token matches only with no word character right before or after it (HF's `single_word`).
pub const SINGLE_WORD: u8 = 4;
/// The token is found in the normalized text, by its normalized content, in a second pass over
/// the stretches the others left (HF's `normalized`).
pub const NORMALIZED: u8 = 8;
/// [`LSTRIP`] and [`RSTRIP`] take the ASCII whitespace of C's `isspace` only, not Unicode's
/// (llama.cpp's rstrip/lstrip token attributes).
pub const C_SPACE: u8 = 16;
/// Every flag bit: a bitmask above it is not a set of flags.
pub const ALL_FLAGS: u8 = LSTRIP | RSTRIP | SINGLE_WORD | NORMALIZED | C_SPACE;

/// Whether a stripping literal with `flags` takes `c` (see [`C_SPACE`]).
pub fn strips(flags: u8, c: char) -> bool {
    if flags & C_SPACE != 0 {
        matches!(c, ' ' | '\t'..='\r')
    } else {
        c.is_whitespace()
    }
}
