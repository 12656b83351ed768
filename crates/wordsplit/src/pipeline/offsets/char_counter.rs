//! Character positions from byte positions ([`CharCounter`]): the char ranges of the tokens'
//! places.

/// Counts the characters that start before a byte position; cheap for positions asked in
/// increasing order (it walks on from the last one), correct for any.
pub(super) struct CharCounter<'a> {
    bytes: &'a [u8],
    byte: usize,
    chars: usize,
    /// All of the text is ASCII: a char position is its byte position.
    pub(super) ascii: bool,
}

#[inline]
pub(super) fn starts_char(byte: u8) -> bool {
    (byte as i8) >= -0x40
}

impl<'a> CharCounter<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            byte: 0,
            chars: 0,
            ascii: text.is_ascii(),
        }
    }

    /// The number of characters that start before byte `pos`.
    #[inline]
    pub(super) fn before(&mut self, pos: usize) -> usize {
        if self.ascii {
            return pos;
        }
        if pos >= self.byte {
            self.chars += self.bytes[self.byte..pos]
                .iter()
                .filter(|&&b| starts_char(b))
                .count();
        } else {
            self.chars -= self.bytes[pos..self.byte]
                .iter()
                .filter(|&&b| starts_char(b))
                .count();
        }
        self.byte = pos;
        self.chars
    }

    /// Record that `chars` characters start before byte `pos` (known from elsewhere).
    #[inline]
    pub(super) fn set(&mut self, pos: usize, chars: usize) {
        self.byte = pos;
        self.chars = chars;
    }
}
