//! [`PrefixTrie`]: a double-array trie over the bytes of a vocabulary's tokens, for the two
//! questions its encoders ask: the longest token a text starts with ([`PrefixTrie::longest`],
//! WordPiece's) and, at each step of a walk along the text, the token that ends there
//! ([`PrefixTrie::advance`], the Unigram search's). What a slot holds of its token is the
//! trie's [`TrieValue`]: an id, or (the Unigram search's) an id and its score, so that the
//! step that finds a piece reads its score in the same slot.
//!
//! Each state is a slot of one array: a state's child on byte `b` is the slot at its `base`
//! plus `b`, when that slot's `check` names the state back. A step is one read of one slot
//! (base, check and the token that ends there share it), so a walk along a word reads a slot
//! per byte and compares nothing else (a [`Cursor`] keeps the base of the slot it read); the longest match is the last slot along the walk
//! that ends a token. The array is laid out from the sorted tokens, the states above the
//! tokens of the lowest ids first (`HOT`), then the others breadth first, each
//! state's children at the first base where their slots are free; a free slot at the front of
//! the array that keeps failing to fit a state is given up on (left a hole) after `GIVE_UP`
//! tries, so the search for a base does not rescan the same holes for every state: a
//! 262k-piece Unigram model lays out in a tenth of the time it takes without. A state whose
//! children fit none of the first `MAX_TRIES` free slots tried goes past the last slot taken,
//! where all are free (a state of many children fits few holes). Whether children fit is
//! tested in a bitmap of the taken slots, and the tokens are sorted and laid out from one
//! buffer of their bytes in sorted order (`sorted_pieces`), which the passes read in turn.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// No token, no state, a free slot.
pub const NONE: u32 = u32::MAX;

/// The tries after which the first free slot the searches start from is given up on (few: a
/// hole no state fits is dropped soon; not one: the array stays dense).
const GIVE_UP: u32 = 16;

/// The free slots a state's children are tried at before they go past the last slot taken
/// (a state of many children fits few holes: trying each hole for each such state was most
/// of the layout's time for a 262k-piece model).
const MAX_TRIES: u32 = 32;

/// The tokens of the lowest ranks (ids), whose states are laid out first, in order of the
/// lowest rank below each: a vocabulary's ids rank its tokens by score or frequency
/// (sentencepiece sorts its pieces by score), so the states that walks through common text
/// read lie together at the front of the array, fewer cache lines than when laid out
/// breadth first among all others.
const HOT: u32 = 1 << 14;

/// What a slot holds of the token that ends at its state: an id (WordPiece's), or an id with
/// its score (the Unigram search's, read in the same slot as the step that finds it).
pub trait TrieValue: Copy {
    /// No token ends here.
    const NONE: Self;
    /// Whether this is [`Self::NONE`].
    fn is_none(&self) -> bool;
    /// The token's rank for the layout (its id): the states above the 16,384 lowest go
    /// first. Any rank gives the same answers.
    fn rank(&self) -> u32;
}

impl TrieValue for u32 {
    const NONE: u32 = NONE;
    #[inline(always)]
    fn is_none(&self) -> bool {
        *self == NONE
    }
    fn rank(&self) -> u32 {
        *self
    }
}

#[derive(Clone, Copy)]
struct Slot<V> {
    /// Where its children's slots start (a child on byte `b` is at `base + b`).
    base: u32,
    /// The state whose child this slot is ([`NONE`]: free).
    check: u32,
    /// The token that ends here ([`TrieValue::NONE`]: none).
    value: V,
}

impl<V: TrieValue> Slot<V> {
    const FREE: Self = Slot {
        base: 0,
        check: NONE,
        value: V::NONE,
    };
}

/// A double-array trie of byte strings to values, ids by default (see the module docs).
pub struct PrefixTrie<V = u32> {
    slots: Vec<Slot<V>>,
}

/// The state of the empty string.
const ROOT: u32 = 0;

impl PrefixTrie {
    /// The state of the empty string.
    pub const ROOT: u32 = ROOT;
}

impl<V: TrieValue> PrefixTrie<V> {
    /// The trie of `tokens` (bytes, value); of two equal byte strings the last one's value
    /// stays.
    pub fn new<'a>(tokens: impl IntoIterator<Item = (&'a [u8], V)>) -> Self {
        let (bytes, ends, values) = sorted_pieces(tokens);
        let piece = |i: usize| &bytes[ends[i] as usize..ends[i + 1] as usize];
        let count = values.len();
        // Every state is a distinct prefix: with the slots reserved for them (and a few
        // holes), the array does not move as it grows.
        let shared = |i: usize| {
            if i == 0 {
                0
            } else {
                common(piece(i - 1), piece(i))
            }
        };
        let states = 1
            + (0..count)
                .map(|i| piece(i).len() - shared(i))
                .sum::<usize>();
        let mut slots = Vec::with_capacity(states + states / 8 + 1024);
        slots.resize(512, Slot::FREE);
        slots[0] = Slot {
            base: 0,
            check: ROOT,
            value: if count > 0 && piece(0).is_empty() {
                values[0]
            } else {
                V::NONE
            },
        };
        // `next_free[i]`: a slot at or after `i` that is free, or closer to it; `taken`, a
        // bit per slot (the fit of a state's children is tested there, not in the slots).
        let mut next_free: Vec<u32> = Vec::with_capacity(slots.capacity());
        next_free.extend(0..512);
        next_free[0] = 1;
        let mut taken = vec![0u64; 512 / 64];
        taken[0] = 1;
        let (mut front, mut front_fails, mut highest_base) = (1usize, 0u32, 0usize);
        // (past the last slot taken)
        let mut tail = 1;
        // (state, the pieces below it, their common prefix's length); the piece that ends at
        // the state, if any (the empty token at the root), comes first in its range (sorted)
        // and is in its slot already. The states above a token of rank below `HOT` (`hot`,
        // by the lowest rank below them) are laid out first, the others breadth first.
        let mut hot = BinaryHeap::from([Reverse((0, ROOT, 0, count, 0))]);
        let mut queue = VecDeque::new();
        let mut groups: Vec<(u8, usize, usize, u32)> = Vec::new();
        let next = |hot: &mut BinaryHeap<_>, queue: &mut VecDeque<_>| match hot.pop() {
            Some(Reverse((_, state, lo, hi, depth))) => Some((state, lo, hi, depth)),
            None => queue.pop_front(),
        };
        while let Some((state, mut lo, hi, depth)) = next(&mut hot, &mut queue) {
            if lo < hi && piece(lo).len() == depth {
                lo += 1;
            }
            groups.clear();
            for (i, value) in values.iter().enumerate().take(hi).skip(lo) {
                let byte = piece(i)[depth];
                let rank = value.rank();
                match groups.last_mut() {
                    Some(group) if group.0 == byte => {
                        group.2 = i + 1;
                        group.3 = group.3.min(rank);
                    }
                    _ => groups.push((byte, i, i + 1, rank)),
                }
            }
            let Some(&(lowest, _, _, _)) = groups.first() else {
                continue;
            };
            let lowest = usize::from(lowest);
            front = find_free(&mut next_free, front);
            let mut candidate = front.max(lowest + 1);
            let mut tries = 0;
            let base = loop {
                let free = find_free(&mut next_free, candidate);
                let base = free - lowest;
                if slots.len() <= base + 256 {
                    let len = (base + 256) * 5 / 4;
                    slots.resize(len, Slot::FREE);
                    next_free.extend(next_free.len() as u32..len as u32);
                    taken.resize(len.div_ceil(64), 0);
                }
                let fits = groups.iter().all(|&(byte, _, _, _)| {
                    let at = base + usize::from(byte);
                    taken[at / 64] >> (at % 64) & 1 == 0
                });
                if fits {
                    break base;
                }
                if free == front {
                    front_fails += 1;
                    if front_fails >= GIVE_UP {
                        // (a hole: it stays free, and no search starts from it again)
                        front = find_free(&mut next_free, front + 1);
                        front_fails = 0;
                    }
                }
                candidate = free + 1;
                tries += 1;
                if tries == MAX_TRIES {
                    // (past the last slot taken every slot is free: the children fit there)
                    candidate = candidate.max(tail);
                }
            };
            slots[state as usize].base = base as u32;
            highest_base = highest_base.max(base);
            for &(byte, glo, ghi, rank) in &groups {
                let at = base + usize::from(byte);
                let value = if piece(glo).len() == depth + 1 {
                    values[glo]
                } else {
                    V::NONE
                };
                slots[at] = Slot {
                    base: 0,
                    check: state,
                    value,
                };
                next_free[at] = at as u32 + 1;
                taken[at / 64] |= 1 << (at % 64);
                tail = tail.max(at + 1);
                if rank < HOT {
                    hot.push(Reverse((rank, at as u32, glo, ghi, depth + 1)));
                } else {
                    queue.push_back((at as u32, glo, ghi, depth + 1));
                }
            }
        }
        // Free slots at the end go, but for 256 past the highest base: a step's slot, a base
        // plus a byte, is then always in the array.
        while slots.len() > highest_base + 256 && slots.last().is_some_and(|s| s.check == NONE) {
            slots.pop();
        }
        if slots.capacity() - slots.len() > slots.len() / 4 {
            slots.shrink_to_fit();
        }
        Self { slots }
    }

    /// The slot of `state`'s child on `byte`, which may be another state's or free.
    #[inline(always)]
    fn slot(&self, state: u32, byte: u8) -> (u32, &Slot<V>) {
        // SAFETY: `state` is a state of this trie, so its slot is in the array, and every
        // base has 256 slots after it in the array (`new`).
        unsafe {
            let at = self.slots.get_unchecked(state as usize).base + u32::from(byte);
            (at, self.slots.get_unchecked(at as usize))
        }
    }

    /// The state after `byte` from `state`, if some token goes on so.
    #[inline(always)]
    pub fn child(&self, state: u32, byte: u8) -> Option<u32> {
        let (at, slot) = self.slot(state, byte);
        (slot.check == state).then_some(at)
    }

    /// The state after `byte` from `state` and the token that ends there
    /// ([`TrieValue::NONE`]: none), if some token goes on so: one read of one slot.
    #[inline(always)]
    pub fn step(&self, state: u32, byte: u8) -> Option<(u32, V)> {
        let (at, slot) = self.slot(state, byte);
        (slot.check == state).then_some((at, slot.value))
    }

    /// A walk's [`Cursor`] at the root.
    #[inline(always)]
    pub fn root(&self) -> Cursor {
        Cursor {
            state: ROOT,
            base: self.slots[ROOT as usize].base,
        }
    }

    /// [`Self::step`] from a cursor: the child's slot is read once and its base kept, so a
    /// walk's next step reads no slot but its child's.
    #[inline(always)]
    pub fn advance(&self, cursor: &mut Cursor, byte: u8) -> Option<V> {
        let at = cursor.base + u32::from(byte);
        // SAFETY: every base has 256 slots after it in the array (`new`).
        let slot = unsafe { self.slots.get_unchecked(at as usize) };
        if slot.check != cursor.state {
            return None;
        }
        *cursor = Cursor {
            state: at,
            base: slot.base,
        };
        Some(slot.value)
    }

    /// The state after `bytes` from `state`, if some token goes on so.
    pub fn walk(&self, state: u32, bytes: &[u8]) -> Option<u32> {
        bytes
            .iter()
            .try_fold(state, |state, &byte| self.child(state, byte))
    }

    /// The value of the token that ends at `state`, if one does.
    #[inline(always)]
    pub fn value(&self, state: u32) -> Option<V> {
        let value = self.slots[state as usize].value;
        (!value.is_none()).then_some(value)
    }

    /// The longest non-empty prefix of `bytes` that is a token from `state` on: `(its
    /// length, its id)`. (With tokens and `bytes` UTF-8, such a prefix ends on a character
    /// boundary: a token is whole characters.)
    #[inline]
    pub fn longest(&self, mut state: u32, bytes: &[u8]) -> Option<(usize, V)> {
        let (mut best_len, mut best) = (0, V::NONE);
        for (i, &byte) in bytes.iter().enumerate() {
            let (at, slot) = self.slot(state, byte);
            if slot.check != state {
                break;
            }
            state = at;
            if !slot.value.is_none() {
                (best_len, best) = (i + 1, slot.value);
            }
        }
        (!best.is_none()).then_some((best_len, best))
    }

    /// The bytes its array takes.
    pub fn size(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot<V>>()
    }
}

/// Where a walk down a [`PrefixTrie`] is: its state and that state's base.
#[derive(Clone, Copy)]
pub struct Cursor {
    state: u32,
    base: u32,
}

/// `tokens` sorted by their bytes, the last of equal ones kept: their bytes one after
/// another, where each one's bytes end (after a 0), and their values.
///
/// The bytes are copied once where the tokens come from (so the sort reads no token's bytes
/// where they lie), and again in sorted order, which the layout's passes read in turn; the
/// sort compares the first 16 bytes as one number (zero after a short token's end: equal
/// numbers are compared in full) and reads the bytes only where those are equal.
#[allow(clippy::type_complexity)]
fn sorted_pieces<'a, V: Copy>(
    tokens: impl IntoIterator<Item = (&'a [u8], V)>,
) -> (Vec<u8>, Vec<u32>, Vec<V>) {
    let mut arena: Vec<u8> = Vec::new();
    let mut items: Vec<(u128, u32, u32, V)> = Vec::new();
    for (token, value) in tokens {
        let mut first = [0u8; 16];
        let n = token.len().min(16);
        first[..n].copy_from_slice(&token[..n]);
        items.push((
            u128::from_be_bytes(first),
            arena.len() as u32,
            token.len() as u32,
            value,
        ));
        arena.extend_from_slice(token);
    }
    let text = |&(_, at, len, _): &(u128, u32, u32, V)| &arena[at as usize..(at + len) as usize];
    // (unstable, and equal bytes ordered by where they came: the last one is kept)
    items.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| text(a).cmp(text(b)))
            .then(a.1.cmp(&b.1))
    });
    let mut bytes = Vec::with_capacity(arena.len());
    let mut ends = Vec::with_capacity(items.len() + 1);
    let mut values: Vec<V> = Vec::with_capacity(items.len());
    ends.push(0u32);
    for (k, item) in items.iter().enumerate() {
        if items
            .get(k + 1)
            .is_some_and(|next| next.0 == item.0 && text(next) == text(item))
        {
            continue;
        }
        bytes.extend_from_slice(text(item));
        ends.push(bytes.len() as u32);
        values.push(item.3);
    }
    (bytes, ends, values)
}

/// The length of the longest common prefix of `a` and `b`.
fn common(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The first free slot at or after `at` (`next_free` covers every slot, and the array's last
/// slot is always free, 256 past the highest base: a chain ends inside the array).
fn find_free(next_free: &mut [u32], at: usize) -> usize {
    let mut i = at;
    while next_free[i] as usize != i {
        let next = next_free[i] as usize;
        next_free[i] = next_free[next];
        i = next;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefixes_by_state() {
        let tokens: &[(&[u8], u32)] = &[
            (b"un", 1),
            (b"una", 2),
            (b"##aff", 3),
            (b"##able", 4),
            (b"##a", 5),
            (b"a", 6),
            ("é".as_bytes(), 7),
            (b"", 9),
        ];
        let trie = PrefixTrie::new(tokens.iter().copied());
        assert_eq!(trie.value(PrefixTrie::ROOT), Some(9), "the empty token");
        assert_eq!(trie.longest(PrefixTrie::ROOT, b"unaffable"), Some((3, 2)));
        let continuing = trie.walk(PrefixTrie::ROOT, b"##").unwrap();
        assert_eq!(trie.value(continuing), None);
        assert_eq!(trie.longest(continuing, b"ffable"), None);
        assert_eq!(trie.longest(continuing, b"affable"), Some((3, 3)));
        assert_eq!(trie.longest(continuing, b"able"), Some((4, 4)));
        assert_eq!(trie.longest(continuing, b"ab"), Some((1, 5)));
        assert_eq!(trie.longest(PrefixTrie::ROOT, b"x"), None);
        assert_eq!(trie.longest(PrefixTrie::ROOT, b""), None);
        assert_eq!(
            trie.longest(PrefixTrie::ROOT, "éa".as_bytes()),
            Some((2, 7))
        );
        assert_eq!(trie.longest(PrefixTrie::ROOT, "\u{c0}".as_bytes()), None);
        assert!(trie.walk(PrefixTrie::ROOT, b"unx").is_none());
    }

    #[test]
    fn every_token_is_found_among_many() {
        // Tokens of every length up to 12 over a small alphabet, so that nodes share slots.
        let mut state = 5u64;
        let mut tokens: Vec<(Vec<u8>, u32)> = (0..20_000)
            .map(|id| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let len = 1 + (state >> 60) as usize % 12;
                let bytes = (0..len)
                    .map(|k| b"abcdefgh#\x7f\x01"[((state >> (3 * k)) % 11) as usize])
                    .collect();
                (bytes, id)
            })
            .collect();
        tokens.sort();
        tokens.dedup_by(|a, b| a.0 == b.0);
        let trie = PrefixTrie::new(tokens.iter().map(|(b, id)| (b.as_slice(), *id)));
        for (bytes, id) in &tokens {
            let state = trie.walk(PrefixTrie::ROOT, bytes).unwrap();
            assert_eq!(trie.value(state), Some(*id));
            assert_eq!(
                trie.longest(PrefixTrie::ROOT, bytes).unwrap().0,
                bytes.len()
            );
        }
        assert!(trie.size() < 24 * 20_000 * 12, "{} bytes", trie.size());
    }

    /// The tokens that are prefixes of `text`, shortest first, by walking the trie (by
    /// states and by a cursor, which agree).
    fn prefixes(trie: &PrefixTrie, text: &[u8]) -> Vec<(usize, u32)> {
        let mut state = PrefixTrie::ROOT;
        let mut found = vec![];
        for (i, &byte) in text.iter().enumerate() {
            let Some((next, piece)) = trie.step(state, byte) else {
                break;
            };
            state = next;
            if piece != NONE {
                found.push((i + 1, piece));
            }
        }
        let mut cursor = trie.root();
        let mut by_cursor = vec![];
        for (i, &byte) in text.iter().enumerate() {
            let Some(piece) = trie.advance(&mut cursor, byte) else {
                break;
            };
            if piece != NONE {
                by_cursor.push((i + 1, piece));
            }
        }
        assert_eq!(found, by_cursor, "{text:?}");
        found
    }

    #[test]
    fn every_prefix_piece_is_found_shortest_first() {
        let pieces: Vec<(&[u8], u32)> = vec![
            (b"ab", 1),
            (b"a", 2),
            (b"abc", 3),
            (b"", 4),
            ("é".as_bytes(), 5),
            (b"b", 6),
        ];
        let trie = PrefixTrie::new(pieces);
        assert_eq!(prefixes(&trie, b"abcd"), [(1, 2), (2, 1), (3, 3)]);
        assert_eq!(prefixes(&trie, b"ac"), [(1, 2)]);
        assert_eq!(prefixes(&trie, "éa".as_bytes()), [(2, 5)]);
        assert_eq!(prefixes(&trie, b"x"), []);
        assert_eq!(prefixes(&trie, b""), []);
    }

    #[test]
    fn many_pieces_with_tables_and_runs_of_edges() {
        // Pieces over all 256 bytes under a few prefixes (tables) and over a few letters
        // (runs of edges), each found by its own walk.
        let mut owned: Vec<Vec<u8>> = Vec::new();
        for first in [b'a', b'b', 0xE2] {
            for b in 0..=255u8 {
                owned.push(vec![first, b]);
                owned.push(vec![first, b, b'x']);
            }
        }
        let mut state = 9u64;
        for _ in 0..5000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = 1 + (state >> 61) as usize;
            owned.push(
                (0..len)
                    .map(|k| b"cdef"[(state >> (8 + 2 * k)) as usize % 4])
                    .collect(),
            );
        }
        owned.sort();
        owned.dedup();
        let pieces: Vec<(&[u8], u32)> = owned
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_slice(), i as u32))
            .collect();
        let trie = PrefixTrie::new(pieces);
        for (i, piece) in owned.iter().enumerate() {
            let found = prefixes(&trie, piece);
            assert_eq!(found.last(), Some(&(piece.len(), i as u32)), "{piece:?}");
        }
    }
}
