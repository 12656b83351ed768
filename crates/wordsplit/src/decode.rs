//! Decoding: token ids back to the bytes they spell.
//!
//! The bytes of a vocabulary's tokens concatenate to the text; making that text a string (and
//! what to do with bytes that are not UTF-8) is the caller's choice, so decoding gives bytes.

use crate::error::Error;
use crate::tables::MergeTables;

impl MergeTables {
    /// Append the bytes of `ids` to `out`; the first unknown id is the error.
    pub fn decode_into(&self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), u32> {
        // Sizing first (which also finds a bad id) spares the reallocations that copy long
        // outputs (runs of whitespace tokens) over and over.
        let mut size = 0;
        for &id in ids {
            size += self.token(id).ok_or(id)?.len();
        }
        out.reserve(size);
        for &id in ids {
            out.extend_from_slice(self.token(id).expect("checked above"));
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
