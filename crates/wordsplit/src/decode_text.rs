//! Decoding by a decoder stage over the tokens' texts, for the models whose tokens are pieces of
//! normalized words rather than bytes that concatenate to the text (WordPiece, WordLevel), as
//! HF tokenizers decodes them (`decode(ids, skip_special_tokens=False)`); the Python package's
//! `engines/decoding.py` is the reference the tests hold it to.
//!
//! * [`DecoderSpec::WordPiece`] (HF's `WordPiece` decoder): each token after the first gets a
//!   space before it, unless it starts with the continuing-subword prefix, which is dropped;
//!   with `cleanup`, each token is then cleaned as HF's `cleanup` does (the space before `.`,
//!   `?`, `!`, `,` and a few English contractions removed);
//! * [`DecoderSpec::None`] (a file without a decoder): the tokens joined by spaces.
//!
//! A token's text is its bytes as UTF-8 (a special or added token's, its text).
//!
//! ```
//! use wordsplit::decode_text::TextDecoder;
//! use wordsplit::spec::DecoderSpec;
//!
//! let decoder = TextDecoder::new(&DecoderSpec::WordPiece { prefix: "##".into(), cleanup: true }).unwrap();
//! let tokens = ["hello", ",", "un", "##aff", "##able", "world", "!"];
//! assert_eq!(decoder.text(tokens), "hello, unaffable world!");
//! ```

use crate::spec::DecoderSpec;

/// HF's `cleanup` (tokenizers' `decoders/wordpiece.rs`), in its order, applied to each token.
const CLEANUP: [(&str, &str); 11] = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
];

/// The decode of a decoder stage over token texts (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextDecoder {
    /// HF's `WordPiece` decoder.
    WordPiece { prefix: String, cleanup: bool },
    /// The tokens joined by spaces.
    Joined,
}

impl TextDecoder {
    /// The decoder of `decoder`, or None for one that concatenates bytes (`ByteLevel`) or
    /// decodes SentencePiece's pieces.
    pub fn new(decoder: &DecoderSpec) -> Option<Self> {
        match decoder {
            DecoderSpec::WordPiece { prefix, cleanup } => Some(Self::WordPiece {
                prefix: prefix.clone(),
                cleanup: *cleanup,
            }),
            DecoderSpec::None => Some(Self::Joined),
            DecoderSpec::ByteLevel | DecoderSpec::SentencePiece { .. } => None,
        }
    }

    /// The text of `tokens`, in order.
    pub fn text<'a>(&self, tokens: impl IntoIterator<Item = &'a str>) -> String {
        let mut out = String::new();
        match self {
            Self::WordPiece { prefix, cleanup } => {
                let mut token = String::new();
                for (i, text) in tokens.into_iter().enumerate() {
                    token.clear();
                    match text.strip_prefix(prefix.as_str()) {
                        _ if i == 0 => token.push_str(text),
                        Some(rest) => token.push_str(rest),
                        None => {
                            token.push(' ');
                            token.push_str(text);
                        }
                    }
                    if *cleanup {
                        for (dirty, clean) in CLEANUP {
                            if token.contains(dirty) {
                                token = token.replace(dirty, clean);
                            }
                        }
                    }
                    out.push_str(&token);
                }
            }
            Self::Joined => {
                for (i, text) in tokens.into_iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(text);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wordpiece(cleanup: bool) -> TextDecoder {
        TextDecoder::new(&DecoderSpec::WordPiece {
            prefix: "##".into(),
            cleanup,
        })
        .unwrap()
    }

    #[test]
    fn wordpiece_joins_continuations_and_cleans_each_token() {
        let tokens = ["it", "'", "s", "##ok", "?", "n't", "'s", "."];
        assert_eq!(wordpiece(true).text(tokens), "it ' sok?n't's.");
        assert_eq!(wordpiece(false).text(tokens), "it ' sok ? n't 's .");
        // A first token keeps its prefix; the cleanup sees each token with its own space only.
        assert_eq!(wordpiece(true).text(["##a", "##b", "."]), "##ab.");
        assert_eq!(wordpiece(true).text([]), "");
        assert_eq!(wordpiece(true).text(["do not"]), "do not");
        assert_eq!(wordpiece(true).text(["x", "do not"]), "x don't");
    }

    #[test]
    fn no_decoder_joins_tokens_by_spaces_and_others_decode_bytes() {
        let joined = TextDecoder::new(&DecoderSpec::None).unwrap();
        assert_eq!(joined.text(["[CLS]", "ATG", "##x"]), "[CLS] ATG ##x");
        assert_eq!(TextDecoder::new(&DecoderSpec::ByteLevel), None);
    }
}
