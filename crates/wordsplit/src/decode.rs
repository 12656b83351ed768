//! Decoding: token ids back to the bytes they spell.
//!
//! The bytes of a vocabulary's tokens concatenate to the text; making that text a string (and
//! what to do with bytes that are not UTF-8) is the caller's choice, so decoding gives bytes.

use crate::error::Error;
use crate::tables::MergeTables;

/// Tokens of up to this many bytes (nearly all of them) are copied with one fixed-size move.
const WIDE: usize = 16;

impl MergeTables {
    /// Append the bytes of `ids` to `out`; the first unknown id is the error (`out` is then
    /// left as it was).
    ///
    /// ```
    /// use wordsplit::tables::MergeTables;
    /// // The 256 single bytes as ids 0-255, then "ab" as 256 (tiktoken's rule: id = rank).
    /// let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
    /// let bpe = bytes.iter().zip(0..).map(|(b, id)| (&b[..], id));
    /// let bpe = bpe.chain([(&b"ab"[..], 256)]);
    /// let tables = MergeTables::from_tokens(bpe, &[], 257, None, true).unwrap();
    /// let mut out = b">".to_vec();
    /// tables.decode_into(&[256, 99], &mut out).unwrap();
    /// assert_eq!(out, b">abc");
    /// assert_eq!(tables.decode_into(&[256, 7_000], &mut out), Err(7_000));
    /// assert_eq!(out, b">abc");
    /// ```
    pub fn decode_into(&self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), u32> {
        // Sizing first finds a bad id before anything is written and reserves the output
        // once (long outputs, runs of whitespace tokens, are not copied over and over).
        let mut size = 0;
        for &id in ids {
            size += self.token_span(id).ok_or(id)?.1;
        }
        out.reserve(size + WIDE);
        let arena = self.arena();
        let base = out.len();
        let mut at = 0;
        // SAFETY: every id was checked above, so each span lies in the arena. The output has
        // room for `size + WIDE` bytes from `base`, and each token is written at `at`, the
        // length of the tokens before it, so `at + len <= size`: a copy of `len` bytes stays
        // in the reserved room, and so does a copy of `WIDE` bytes when `len <= WIDE`
        // (`at + WIDE <= size - len + WIDE`). The bytes a wide copy writes past the token are
        // overwritten by the tokens after it or lie past the length set at the end.
        unsafe {
            let dst = out.as_mut_ptr().add(base);
            for &id in ids {
                let (start, len) = self.token_span(id).unwrap_unchecked();
                let src = arena.as_ptr().add(start);
                if len <= WIDE && start + WIDE <= arena.len() {
                    // A constant-size copy is two moves, not a call to memcpy per token.
                    std::ptr::copy_nonoverlapping(src, dst.add(at), WIDE);
                } else {
                    std::ptr::copy_nonoverlapping(src, dst.add(at), len);
                }
                at += len;
            }
            out.set_len(base + size);
        }
        Ok(())
    }

    /// The bytes of `ids`, concatenated; [`Error::UnknownId`] names the first id that is not
    /// a token of this vocabulary.
    pub fn decode(&self, ids: &[u32]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.decode_into(ids, &mut out).map_err(Error::UnknownId)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::tables::tests::tiny;

    #[test]
    fn decode_copies_short_long_and_last_tokens_exactly() {
        // Tokens of 1, 16, 17 and 40 bytes; the last one added ends the arena, so a wide copy
        // of it would read past the arena's end and takes the exact-length copy instead.
        let long = [b'x'; 40];
        let t = tiny(&[b"0123456789abcdef", b"0123456789abcdefg", &long, b"yz"]);
        let ids = [256, 97, 257, 258, 259, 258, 256, 10, 259];
        let mut expected = Vec::new();
        for &id in &ids {
            expected.extend_from_slice(t.token(id).unwrap());
        }
        let mut out = b"kept".to_vec();
        t.decode_into(&ids, &mut out).unwrap();
        assert_eq!(&out[..4], b"kept");
        assert_eq!(&out[4..], &expected[..]);
        // Every prefix of the ids, so each token in turn is the last one written.
        for n in 0..=ids.len() {
            let mut out = Vec::new();
            t.decode_into(&ids[..n], &mut out).unwrap();
            assert_eq!(out, t.decode(&ids[..n]).unwrap());
            let want: Vec<u8> = ids[..n]
                .iter()
                .flat_map(|&id| t.token(id).unwrap().to_vec())
                .collect();
            assert_eq!(out, want);
        }
        // An unknown id anywhere: its id, and the output untouched.
        let mut out = b"kept".to_vec();
        assert_eq!(t.decode_into(&[256, 9_999, 257], &mut out), Err(9_999));
        assert_eq!(out, b"kept");
        assert_eq!(t.decode_into(&[], &mut out), Ok(()));
        assert_eq!(out, b"kept");
    }
}
