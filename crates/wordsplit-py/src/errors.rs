//! The one place where errors become Python exceptions: the core's [`Error`] variants, and
//! the bindings' own checks, as instances of the classes of `wordsplit.errors`, worded as the
//! Python engine words them, so that both backends raise the same exceptions.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use wordsplit::formats::FormatError;
use wordsplit::Error;

/// An instance of the `wordsplit.errors` class `class` with `message`.
pub(crate) fn ws_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py
        .import("wordsplit.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(),)))
    {
        Ok(instance) => PyErr::from_value(instance),
        Err(err) => err,
    }
}

/// Python's `repr()` of a string (as the Python engine's messages show names and literals).
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> String {
    PyString::new(py, text)
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| format!("{text:?}"))
}

/// Python's `repr()` of bytes.
fn bytes_repr(py: Python<'_>, bytes: &[u8]) -> String {
    PyBytes::new(py, bytes)
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| format!("{bytes:?}"))
}

/// The Python exception of a core error. A foreign stage's error is the Python exception
/// that stage raised, taken back out of [`Error::Foreign`].
pub(crate) fn to_py(py: Python<'_>, error: Error) -> PyErr {
    match error {
        Error::Foreign(error) => match error.downcast::<PyErr>() {
            Ok(error) => *error,
            Err(other) => ws_error(py, "ComponentError", other.to_string()),
        },
        Error::VocabFormat(message) => ws_error(py, "VocabFormatError", message),
        Error::NormalizedLiteralEmpty { literal } => ws_error(
            py,
            "VocabFormatError",
            format!(
                "the normalizer makes the normalized added token {} empty, which HF cannot \
                 match; set its normalized flag to false or remove it",
                py_repr(py, &literal)
            ),
        ),
        Error::NormalizedLiteralsCollide {
            first,
            second,
            content,
        } => ws_error(
            py,
            "VocabFormatError",
            format!(
                "the normalizer makes the normalized added tokens {} and {} the same text {}, \
                 and HF then matches one or the other at random; remove one, or set its \
                 normalized flag to false",
                py_repr(py, &first),
                py_repr(py, &second),
                py_repr(py, &content)
            ),
        ),
        Error::DisallowedSpecial(token) => {
            let token = py_repr(py, &token);
            ws_error(
                py,
                "DisallowedSpecialError",
                format!(
                    "text contains the special token {token}, which is disallowed; pass \
                     allowed_special={{{token}}} (or allowed_special='all') to encode it as a \
                     special token, or disallowed_special=() to encode it as plain text"
                ),
            )
        }
        Error::Component {
            stage,
            name,
            message,
        } => ws_error(
            py,
            "ComponentError",
            format!("{stage} {}: {message}", py_repr(py, &name)),
        ),
        Error::Untiled { encoder, piece } => ws_error(
            py,
            "ComponentError",
            format!(
                "encoder {}: the ids encode_piece({}) returned do not spell the piece; offsets \
                 need each piece's ids to join to its bytes",
                py_repr(py, &encoder),
                bytes_repr(py, &piece)
            ),
        ),
        Error::Unsupported(message) => ws_error(py, "UnsupportedTokenizerError", message),
        Error::MissingUnknownToken {
            vocab,
            piece,
            token,
        } => ws_error(
            py,
            "EncodeInputError",
            format!(
                "{vocab}: the piece {} needs the unknown token {}, which is not in the \
                 vocabulary (HF raises MissingUnkToken); add it to the vocabulary",
                py_repr(py, &piece),
                py_repr(py, &token)
            ),
        ),
        Error::UnknownId(id) => ws_error(
            py,
            "UnknownTokenError",
            format!("token id {id} is not in the vocabulary"),
        ),
        Error::Format(error) => {
            let class = match error {
                FormatError::Unsupported { .. } | FormatError::SentencePiece => {
                    "UnsupportedTokenizerError"
                }
                FormatError::UnknownName { .. } => "UnknownVocabError",
                _ => "VocabFormatError",
            };
            ws_error(py, class, error.to_string())
        }
    }
}

/// A ComponentError with `message`, as a core error (a foreign stage broke its contract).
pub(crate) fn component_error(py: Python<'_>, message: String) -> Error {
    Error::Foreign(Box::new(ws_error(py, "ComponentError", message)))
}

/// UnknownComponentError: no native `kind` (encoder, normalizer) is called `name`.
pub(crate) fn unknown_component(py: Python<'_>, kind: &str, name: &str, known: &str) -> PyErr {
    ws_error(
        py,
        "UnknownComponentError",
        format!(
            "unknown native {kind} {}; known: {known}",
            py_repr(py, name)
        ),
    )
}

/// UnsupportedTokenizerError: no scanner is registered for `pattern`.
pub(crate) fn no_scanner(py: Python<'_>, pattern: &str) -> PyErr {
    ws_error(
        py,
        "UnsupportedTokenizerError",
        format!("no native scanner for the pattern {}", py_repr(py, pattern)),
    )
}
