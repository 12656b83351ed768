//! The one error type of the core.
//!
//! Each variant says what went wrong and carries the parts a message is made of, unformatted,
//! so that the bindings of each language can word it as their users expect (quoting names
//! and texts in that language's syntax) and pick their own exception class per variant;
//! [`Display`](std::fmt::Display) gives the plain Rust wording. A failure of a stage the
//! bindings supplied (a [`Normalizer`](crate::Normalizer), [`Spanner`](crate::Spanner) or
//! [`Encoder`](crate::Encoder) written in another language) travels as [`Error::Foreign`],
//! from which the bindings take their original error back.

use std::fmt;

/// The pipeline stage an error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Normalizer,
    Spanner,
    Encoder,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Normalizer => "normalizer",
            Stage::Spanner => "spanner",
            Stage::Encoder => "encoder",
        })
    }
}

/// Everything the core can fail with.
#[derive(Debug)]
pub enum Error {
    /// The vocabulary's data is inconsistent (duplicate ids or bytes, an id beyond n_vocab, a
    /// literal on a BPE id, a matcher that cannot be built): the message says which.
    VocabFormat(String),
    /// The normalizer makes this added token's content empty (HF cannot match it).
    NormalizedLiteralEmpty { literal: String },
    /// The normalizer makes two added tokens' contents the same text.
    NormalizedLiteralsCollide {
        first: String,
        second: String,
        content: String,
    },
    /// The text holds this special token and the policy disallows it.
    DisallowedSpecial(String),
    /// A stage broke its contract on some input: which stage, its name, what it did.
    Component {
        stage: Stage,
        name: String,
        message: String,
    },
    /// The ids an encoder gave for `piece` do not spell it (offsets need them to).
    Untiled { encoder: String, piece: Vec<u8> },
    /// The core cannot run this tokenizer as configured (a pattern the regex spanner
    /// refuses, a scanner asked for a pattern it is not proven for, an encoder the
    /// vocabulary cannot use): the message says what and what to use instead.
    Unsupported(String),
    /// A token id that is not in the vocabulary.
    UnknownId(u32),
    /// A piece of the text needs the model's unknown token, which the vocabulary `vocab`
    /// lacks (HF's `MissingUnkToken`): the piece (its first 40 characters) and the token.
    MissingUnknownToken {
        vocab: String,
        piece: String,
        token: String,
    },
    /// A vocabulary file could not be read: the reader's error says where and why.
    Format(crate::formats::FormatError),
    /// A stage supplied by the bindings failed with this error of its own.
    Foreign(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::VocabFormat(message) | Error::Unsupported(message) => f.write_str(message),
            Error::NormalizedLiteralEmpty { literal } => write!(
                f,
                "the normalizer makes the normalized added token {literal:?} empty, which HF \
                 cannot match; set its normalized flag to false or remove it"
            ),
            Error::NormalizedLiteralsCollide {
                first,
                second,
                content,
            } => write!(
                f,
                "the normalizer makes the normalized added tokens {first:?} and {second:?} the \
                 same text {content:?}; remove one, or set its normalized flag to false"
            ),
            Error::DisallowedSpecial(token) => write!(
                f,
                "text contains the special token {token:?}, which the special-token policy \
                 disallows"
            ),
            Error::Component {
                stage,
                name,
                message,
            } => write!(f, "{stage} {name:?}: {message}"),
            Error::Untiled { encoder, piece } => write!(
                f,
                "encoder {encoder:?}: the ids it returned for the piece {piece:?} do not spell \
                 the piece; offsets need each piece's ids to join to its bytes"
            ),
            Error::UnknownId(id) => write!(f, "token id {id} is not in the vocabulary"),
            Error::MissingUnknownToken {
                vocab,
                piece,
                token,
            } => write!(
                f,
                "{vocab}: the piece {piece:?} needs the unknown token {token:?}, which is not in \
                 the vocabulary (HF raises MissingUnkToken); add it to the vocabulary"
            ),
            Error::Format(error) => error.fmt(f),
            Error::Foreign(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Foreign(error) => Some(&**error),
            Error::Format(error) => Some(error),
            _ => None,
        }
    }
}

impl From<crate::formats::FormatError> for Error {
    fn from(error: crate::formats::FormatError) -> Self {
        Error::Format(error)
    }
}

impl From<crate::tables::TablesError> for Error {
    fn from(error: crate::tables::TablesError) -> Self {
        Error::VocabFormat(error.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_errors_come_back_whole() {
        #[derive(Debug)]
        struct Plugin;
        impl fmt::Display for Plugin {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the plug-in failed")
            }
        }
        impl std::error::Error for Plugin {}
        let error = Error::Foreign(Box::new(Plugin));
        assert_eq!(error.to_string(), "the plug-in failed");
        let Error::Foreign(inner) = error else {
            unreachable!()
        };
        assert!(inner.downcast::<Plugin>().is_ok());
    }

    #[test]
    fn messages_name_the_stage() {
        let error = Error::Component {
            stage: Stage::Spanner,
            name: "regex".into(),
            message: "no match at byte 3".into(),
        };
        assert_eq!(error.to_string(), "spanner \"regex\": no match at byte 3");
    }
}
