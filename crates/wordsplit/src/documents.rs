//! Documents of a byte buffer cut at a separator, as a file of one document per line is.
//!
//! [`split`] finds the documents of a buffer read from a file: the bytes between occurrences
//! of the separator, found left to right without overlap (as Python's `bytes.split`), each as
//! a slice of the buffer (no copy, no allocation per document), up to a chunk's worth. A
//! buffer is a piece of a longer stream: only documents that a separator ends are taken, and
//! the bytes after the last separator wait for the next buffer, unless this is the last one
//! (then they are the last document, when there are any: a final separator starts no empty
//! document). The documents go to [`crate::arrow::runs`] and [`crate::arrow::encode_run`],
//! which encode them on threads and frame their ids into one flat buffer.
//!
//! It does not: read files, check UTF-8 (the encoding threads do, per document), or decode
//! JSON lines.

/// The documents of a buffer ([`split`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Split<'a> {
    /// Each document's bytes, without its separator (Some always: the rows of
    /// [`crate::arrow::runs`], where None is an Arrow null).
    pub rows: Vec<Option<&'a [u8]>>,
    /// The bytes the documents and their separators take from the start of the buffer; the
    /// rest waits for the next call.
    pub consumed: usize,
}

/// A chunk of the documents of `data` between occurrences of `separator` (non-empty), found
/// left to right and without overlap: those up to the first whose end (its separator
/// included) is `limit` bytes or more into `data`. When no document reaches `limit`: with
/// `last`, all of them and the bytes after the last separator as one more document, if there
/// are any; without, none (the buffer holds less than a chunk: the caller reads more).
///
/// ```
/// use wordsplit::documents::split;
/// let cut = split(b"one\n\ntwo\nthr", b"\n", 5, false);
/// assert_eq!(cut.rows, [Some(&b"one"[..]), Some(&b""[..])]);
/// assert_eq!(cut.consumed, 5);
/// assert_eq!(split(b"one\nthr", b"\n", 100, false).consumed, 0);
/// assert_eq!(split(b"one\nthr", b"\n", 100, true).rows.len(), 2);
/// ```
pub fn split<'a>(data: &'a [u8], separator: &[u8], limit: usize, last: bool) -> Split<'a> {
    assert!(!separator.is_empty(), "an empty separator");
    // A line is rarely shorter than ~16 bytes: a guess that avoids most regrowing.
    let mut rows = Vec::with_capacity(data.len().min(limit) / 16 + 1);
    let mut start = 0;
    let mut take = |end: usize, rows: &mut Vec<Option<&'a [u8]>>| {
        rows.push(Some(&data[start..end]));
        start = end + separator.len();
        start >= limit
    };
    let full = if let [byte] = separator {
        memchr::memchr_iter(*byte, data).any(|end| take(end, &mut rows))
    } else {
        // memmem's matches do not overlap, and each is found after the previous one ends.
        memchr::memmem::find_iter(data, separator).any(|end| take(end, &mut rows))
    };
    if full {
        return Split {
            rows,
            consumed: start,
        };
    }
    if !last {
        rows.clear();
        return Split { rows, consumed: 0 };
    }
    if start < data.len() {
        rows.push(Some(&data[start..]));
    }
    Split {
        rows,
        consumed: data.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Python's `bytes.split(sep)` gives, with the last piece kept apart.
    fn python_split<'a>(data: &'a [u8], sep: &[u8]) -> (Vec<&'a [u8]>, &'a [u8]) {
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut at = 0;
        while at + sep.len() <= data.len() {
            if &data[at..at + sep.len()] == sep {
                pieces.push(&data[start..at]);
                at += sep.len();
                start = at;
            } else {
                at += 1;
            }
        }
        (pieces, &data[start..])
    }

    #[test]
    fn documents_are_the_pieces_between_separators_left_to_right() {
        let cases: [(&[u8], &[u8]); 8] = [
            (b"", b"\n"),
            (b"\n", b"\n"),
            (b"a\n\nb", b"\n"),
            (b"a\r\nb\r\n", b"\r\n"),
            (b"xaaa", b"aa"),
            (b"aaaaa", b"aa"),
            (b"p1\n\n\np2\n\n", b"\n\n"),
            (b"no separator", b"\n"),
        ];
        for (data, sep) in cases {
            let (pieces, tail) = python_split(data, sep);
            let mut want: Vec<_> = pieces.iter().map(|p| Some(*p)).collect();
            if !tail.is_empty() {
                want.push(Some(tail));
            }
            let all = split(data, sep, usize::MAX, true);
            assert_eq!(all.rows, want, "{data:?} {sep:?}");
            assert_eq!(all.consumed, data.len());
            // Less than a chunk and not the last buffer: nothing yet.
            assert_eq!(split(data, sep, usize::MAX, false).consumed, 0);
        }
    }

    #[test]
    fn chunks_end_at_the_first_document_that_reaches_the_limit() {
        let data = b"ab\ncd\n\nefg\nh";
        let cut = split(data, b"\n", 4, false);
        assert_eq!(
            (cut.rows, cut.consumed),
            (vec![Some(&b"ab"[..]), Some(b"cd")], 6)
        );
        assert_eq!(split(data, b"\n", 3, false).consumed, 3); // "ab\n" is 3 bytes
        assert_eq!(split(data, b"\n", 12, false).consumed, 0); // "h" is not ended yet
        let rest = split(data, b"\n", 12, true);
        assert_eq!((rest.rows.len(), rest.consumed), (5, data.len()));
    }

    #[test]
    fn chunks_of_a_stream_cut_anywhere_give_the_documents_of_the_whole() {
        let data = b"first\nsecond\r\n\nfourth aa aaa\nlast";
        for sep in [&b"\n"[..], b"aa", b"\r\n"] {
            let whole = split(data, sep, usize::MAX, true).rows;
            for limit in [1, 2, 5, 100] {
                for cut in 0..=data.len() {
                    // The stream's first `cut` bytes arrive, then the rest.
                    let (mut rows, mut at) = (Vec::new(), 0);
                    let mut available = cut;
                    loop {
                        let last = available == data.len();
                        let chunk = split(&data[at..available], sep, limit, last);
                        rows.extend(chunk.rows);
                        at += chunk.consumed;
                        if at == data.len() {
                            break;
                        }
                        if chunk.consumed == 0 {
                            available = data.len();
                        }
                    }
                    assert_eq!(rows, whole, "cut at {cut}, limit {limit}, {sep:?}");
                }
            }
        }
    }
}
