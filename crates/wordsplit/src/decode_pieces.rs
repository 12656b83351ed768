//! Decoding a SentencePiece vocabulary's pieces ([`crate::spec::DecoderSpec::SentencePiece`]) as
//! `sentencepiece` and HF tokenizers decode them, for the Unigram models the Rust readers give
//! (a `.model`, a tokenizer.json); the Python package's `engines/sentencepiece.py` is the
//! reference the tests hold it to. The pieces are not bytes that concatenate to the text: `▁`
//! is a space, the dummy prefix's space is dropped, control pieces are empty.
//!
//! * style `sentencepiece` (`DecodeIds`): a text piece with `▁` as a space, the first one's
//!   leading `▁` dropped (once for `first`; for `all`, every piece's until text appears); a run
//!   of byte pieces decoded a character at a time, each byte that starts no valid UTF-8
//!   character U+FFFD; a control piece nothing; the unknown piece its surface (` ⁇ `).
//! * style `hf` with `strip_leading_space` `all` (HF's `Metaspace` decoder): each token is its
//!   text (special tokens and `<0x41>` too), the first with every `▁` dropped, the others with
//!   `▁` as a space.
//! * style `hf` otherwise (`Replace("▁", " ")`, `ByteFallback`, `Fuse`, an optional `Strip`):
//!   every token but a byte token is its text with `▁` as a space; a run of byte tokens is its
//!   UTF-8 text, or one U+FFFD per token when it is not valid UTF-8; with `first`, one leading
//!   space of the whole text dropped.
//!
//! ```
//! use wordsplit::decode_pieces::{PieceDecoder, PieceKind};
//! use wordsplit::spec::{DecoderStyle, StripLeadingSpace};
//!
//! let decoder = PieceDecoder::new(DecoderStyle::SentencePiece, StripLeadingSpace::All, " \u{2047} ");
//! let tokens = [(PieceKind::Text, "▁Hi▁".as_bytes()), (PieceKind::Byte(0xf0), &b""[..]), (PieceKind::Control, b"</s>")];
//! assert_eq!(decoder.text(tokens), "Hi \u{fffd}");
//! ```

use crate::spec::{DecoderStyle, StripLeadingSpace};

const SPACE: &str = "\u{2581}";

/// What a token is to the decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceKind {
    /// A piece of text (`▁` a space).
    Text,
    /// A byte piece (`<0xNN>`): the byte.
    Byte(u8),
    /// A control piece (`<s>`, `</s>`): decodes as nothing.
    Control,
    /// The unknown piece: decodes as the surface.
    Unknown,
}

/// The decode of one SentencePiece vocabulary (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PieceDecoder {
    style: DecoderStyle,
    strip: StripLeadingSpace,
    unk_surface: String,
}

impl PieceDecoder {
    pub fn new(style: DecoderStyle, strip: StripLeadingSpace, unk_surface: &str) -> Self {
        Self {
            style,
            strip,
            unk_surface: unk_surface.to_owned(),
        }
    }

    /// Whose decode it is (sentencepiece's, HF's, llama.cpp's).
    pub fn style(&self) -> DecoderStyle {
        self.style
    }

    /// The kind of a token whose bytes are `data` (the Python package's `token_kinds`):
    /// `special` for a special token, `unknown` for the unknown token; `byte_spelled` tells
    /// whether the vocabulary has the `<0xNN>` token of a one-byte token's byte (HF reads a
    /// one-byte token without one as a byte).
    pub fn kind_of(
        &self,
        data: &[u8],
        special: bool,
        unknown: bool,
        byte_spelled: impl Fn(u8) -> bool,
    ) -> PieceKind {
        let hf = self.style == DecoderStyle::Hf;
        if special && hf {
            return PieceKind::Text; // (HF decodes special tokens as their text)
        }
        if special {
            return if unknown {
                PieceKind::Unknown
            } else {
                PieceKind::Control
            };
        }
        if let [byte] = data {
            if *byte >= 0x80 || (hf && !byte_spelled(*byte)) {
                return PieceKind::Byte(*byte);
            }
        }
        match std::str::from_utf8(data)
            .ok()
            .and_then(crate::formats::sentencepiece_unigram::byte_piece_value)
        {
            Some(byte) if !self.is_metaspace() => PieceKind::Byte(byte),
            _ => PieceKind::Text,
        }
    }

    /// HF's `Metaspace` decoder, which reads every token as its text.
    fn is_metaspace(&self) -> bool {
        self.style == DecoderStyle::Hf && self.strip == StripLeadingSpace::All
    }

    /// The text of `tokens`, each its kind and bytes, in order.
    pub fn text<'a>(&self, tokens: impl IntoIterator<Item = (PieceKind, &'a [u8])>) -> String {
        match (self.style, self.strip) {
            (DecoderStyle::Hf, StripLeadingSpace::All) => {
                let mut out = Vec::new();
                for (i, (_, data)) in tokens.into_iter().enumerate() {
                    let space: &[u8] = if i == 0 { b"" } else { b" " };
                    replace_into(data, space, &mut out);
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            (DecoderStyle::Hf, strip) => {
                let text = self.hf(tokens);
                match text.strip_prefix(' ') {
                    Some(rest) if strip == StripLeadingSpace::First => rest.to_owned(),
                    _ => text,
                }
            }
            _ => self.sentencepiece(tokens),
        }
    }

    /// HF's `Replace`, `ByteFallback` and `Fuse` decoders.
    fn hf<'a>(&self, tokens: impl IntoIterator<Item = (PieceKind, &'a [u8])>) -> String {
        let mut out = String::new();
        let mut run: Vec<u8> = Vec::new();
        let flush = |run: &mut Vec<u8>, out: &mut String| {
            match std::str::from_utf8(run) {
                Ok(text) => out.push_str(text),
                Err(_) => out.extend(std::iter::repeat_n('\u{fffd}', run.len())),
            }
            run.clear();
        };
        for (kind, data) in tokens {
            if let PieceKind::Byte(byte) = kind {
                run.push(byte);
                continue;
            }
            flush(&mut run, &mut out);
            let mut text = Vec::new();
            replace_into(data, b" ", &mut text);
            out.push_str(&String::from_utf8_lossy(&text));
        }
        flush(&mut run, &mut out);
        out
    }

    /// sentencepiece's `DecodeIds`.
    fn sentencepiece<'a>(&self, tokens: impl IntoIterator<Item = (PieceKind, &'a [u8])>) -> String {
        let mut out = String::new();
        let mut run: Vec<u8> = Vec::new();
        let mut at_start = self.strip != StripLeadingSpace::None;
        for (kind, data) in tokens {
            if let PieceKind::Byte(byte) = kind {
                run.push(byte);
                continue;
            }
            if !run.is_empty() {
                decode_bytes_into(&run, &mut out);
                run.clear();
            }
            if at_start && !out.is_empty() {
                at_start = false;
            }
            match kind {
                PieceKind::Control => {}
                PieceKind::Unknown => out.push_str(&self.unk_surface),
                _ => {
                    let mut data = data;
                    if at_start {
                        if let Some(rest) = data.strip_prefix(SPACE.as_bytes()) {
                            data = rest;
                            if self.strip == StripLeadingSpace::First {
                                at_start = false;
                            }
                        }
                    }
                    let mut text = Vec::new();
                    replace_into(data, b" ", &mut text);
                    out.push_str(&String::from_utf8_lossy(&text));
                }
            }
        }
        if !run.is_empty() {
            decode_bytes_into(&run, &mut out);
        }
        out
    }
}

/// `data` with every `▁` replaced by `with`, appended to `out`.
fn replace_into(data: &[u8], with: &[u8], out: &mut Vec<u8>) {
    let space = SPACE.as_bytes();
    let mut rest = data;
    while let Some(at) = memchr::memmem::find(rest, space) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + space.len()..];
    }
    out.extend_from_slice(rest);
}

/// Bytes of byte pieces as sentencepiece decodes them: each valid UTF-8 character as itself,
/// each other byte U+FFFD.
fn decode_bytes_into(data: &[u8], out: &mut String) {
    let mut rest = data;
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                return;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.push_str(std::str::from_utf8(&rest[..good]).expect("valid up to here"));
                out.push('\u{fffd}');
                rest = &rest[good + 1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentencepiece_bytes_are_a_character_at_a_time() {
        let mut out = String::new();
        decode_bytes_into(b"a\xf0\x9f\x98b\xc3\xa9", &mut out);
        assert_eq!(out, "a\u{fffd}\u{fffd}\u{fffd}b\u{e9}");
    }

    #[test]
    fn hf_styles_decode_as_hf() {
        let text = |d: &PieceDecoder, t: &[(PieceKind, &[u8])]| d.text(t.iter().copied());
        let chain = PieceDecoder::new(DecoderStyle::Hf, StripLeadingSpace::First, "");
        let tokens: [(PieceKind, &[u8]); 4] = [
            (PieceKind::Text, "▁Hi".as_bytes()),
            (PieceKind::Byte(0xe2), b"<0xE2>"),
            (PieceKind::Byte(b'A'), b"<0x41>"),
            (PieceKind::Text, b"</s>"),
        ];
        assert_eq!(text(&chain, &tokens), "Hi\u{fffd}\u{fffd}</s>");
        let metaspace = PieceDecoder::new(DecoderStyle::Hf, StripLeadingSpace::All, "");
        let tokens: [(PieceKind, &[u8]); 2] = [
            (PieceKind::Text, "▁a▁b".as_bytes()),
            (PieceKind::Text, "▁<0x41>".as_bytes()),
        ];
        assert_eq!(text(&metaspace, &tokens), "ab <0x41>");
    }

    #[test]
    fn sentencepiece_strips_the_dummy_prefix_until_text() {
        let all = PieceDecoder::new(DecoderStyle::SentencePiece, StripLeadingSpace::All, "?");
        let tokens: [(PieceKind, &[u8]); 4] = [
            (PieceKind::Control, b"<s>"),
            (PieceKind::Text, "▁".as_bytes()),
            (PieceKind::Text, "▁a".as_bytes()),
            (PieceKind::Unknown, b"<unk>"),
        ];
        assert_eq!(all.text(tokens), "a?");
        let first = PieceDecoder::new(DecoderStyle::SentencePiece, StripLeadingSpace::First, "?");
        assert_eq!(first.text(tokens), " a?");
    }
}
