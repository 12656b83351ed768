//! [`PrefixTrie`]: a double-array trie over the bytes of a vocabulary's tokens, for the longest
//! token a text starts with ([`PrefixTrie::longest`]), WordPiece's one question.
//!
//! Each state is a slot of one array: a state's child on byte `b` is the slot at its `base`
//! plus `b`, when that slot's `check` names the state back. A step is one read of one slot
//! (base, check and the token that ends there share it), so a walk along a word reads a slot
//! per byte and compares nothing else; the longest match is the last slot along the walk
//! that ends a token.

/// No token, no state, a free slot.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Slot {
    /// Where its children's slots start (a child on byte `b` is at `base + b`).
    base: u32,
    /// The state whose child this slot is ([`NONE`]: free).
    check: u32,
    /// The token that ends here ([`NONE`]: none).
    value: u32,
}

const FREE: Slot = Slot {
    base: 0,
    check: NONE,
    value: NONE,
};

/// A double-array trie of byte strings to ids (see the module docs).
pub struct PrefixTrie {
    slots: Vec<Slot>,
}

/// The plain trie the double array is laid out from: per node, its children by byte (sorted)
/// and its token.
struct Node {
    children: Vec<(u8, u32)>,
    value: u32,
}

impl PrefixTrie {
    /// The state of the empty string.
    pub const ROOT: u32 = 0;

    /// The trie of `tokens` (bytes, id); of two equal byte strings the last one's id stays.
    pub fn new<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>) -> Self {
        let mut nodes = vec![Node {
            children: Vec::new(),
            value: NONE,
        }];
        for (bytes, id) in tokens {
            let mut node = 0usize;
            for &byte in bytes {
                let children = &nodes[node].children;
                node = match children.binary_search_by_key(&byte, |&(b, _)| b) {
                    Ok(at) => children[at].1 as usize,
                    Err(at) => {
                        let child = nodes.len();
                        nodes[node].children.insert(at, (byte, child as u32));
                        nodes.push(Node {
                            children: Vec::new(),
                            value: NONE,
                        });
                        child
                    }
                };
            }
            nodes[node].value = id;
        }
        Self::lay_out(&nodes)
    }

    /// The double array of a plain trie: each node's children placed at the first base where
    /// all their slots are free, breadth first. The search for a base visits free slots only
    /// (`next_free`), from the first one a base of at least 1 can reach.
    fn lay_out(nodes: &[Node]) -> Self {
        let mut slots = vec![FREE; 512];
        slots[0] = Slot {
            base: 0,
            check: Self::ROOT,
            value: nodes[0].value,
        };
        // `next_free[i]`: a slot at or after `i` that is free, or closer to it (path halving
        // keeps the chains short).
        let mut next_free: Vec<u32> = (0..512).collect();
        next_free[0] = 1;
        let mut queue = std::collections::VecDeque::from([(0usize, Self::ROOT)]);
        while let Some((node, state)) = queue.pop_front() {
            let children = &nodes[node].children;
            let Some(&(lowest, _)) = children.first() else {
                continue;
            };
            let lowest = usize::from(lowest);
            let mut candidate = lowest + 1;
            let base = loop {
                let free = find_free(&mut next_free, candidate);
                let base = free - lowest;
                if slots.len() <= base + 256 {
                    let len = (base + 256) * 5 / 4;
                    slots.resize(len, FREE);
                    next_free.extend(next_free.len() as u32..len as u32);
                }
                if children
                    .iter()
                    .all(|&(byte, _)| slots[base + usize::from(byte)].check == NONE)
                {
                    break base;
                }
                candidate = free + 1;
            };
            slots[state as usize].base = base as u32;
            for &(byte, child) in children {
                let at = base + usize::from(byte);
                slots[at] = Slot {
                    base: 0,
                    check: state,
                    value: nodes[child as usize].value,
                };
                next_free[at] = at as u32 + 1;
                queue.push_back((child as usize, at as u32));
            }
        }
        // Free slots at the end go, but for 256 past the highest base: a step's slot, a base
        // plus a byte, is then always in the array.
        let highest_base = slots
            .iter()
            .map(|slot| slot.base as usize)
            .max()
            .unwrap_or(0);
        while slots.len() > highest_base + 256 && slots.last().is_some_and(|s| s.check == NONE) {
            slots.pop();
        }
        slots.shrink_to_fit();
        Self { slots }
    }

    /// The slot of `state`'s child on `byte`, which may be another state's or free.
    #[inline(always)]
    fn step(&self, state: u32, byte: u8) -> (u32, &Slot) {
        // SAFETY: `state` is a state of this trie, so its slot is in the array, and every
        // base has 256 slots after it in the array (`lay_out`).
        unsafe {
            let at = self.slots.get_unchecked(state as usize).base + u32::from(byte);
            (at, self.slots.get_unchecked(at as usize))
        }
    }

    /// The state after `byte` from `state`, if some token goes on so.
    #[inline(always)]
    pub fn child(&self, state: u32, byte: u8) -> Option<u32> {
        let (at, slot) = self.step(state, byte);
        (slot.check == state).then_some(at)
    }

    /// The state after `bytes` from `state`, if some token goes on so.
    pub fn walk(&self, state: u32, bytes: &[u8]) -> Option<u32> {
        bytes
            .iter()
            .try_fold(state, |state, &byte| self.child(state, byte))
    }

    /// The id of the token that ends at `state`, if one does.
    #[inline(always)]
    pub fn value(&self, state: u32) -> Option<u32> {
        let value = self.slots[state as usize].value;
        (value != NONE).then_some(value)
    }

    /// The longest non-empty prefix of `bytes` that is a token from `state` on: `(its
    /// length, its id)`. (With tokens and `bytes` UTF-8, such a prefix ends on a character
    /// boundary: a token is whole characters.)
    #[inline]
    pub fn longest(&self, mut state: u32, bytes: &[u8]) -> Option<(usize, u32)> {
        let (mut best_len, mut best_id) = (0, NONE);
        for (i, &byte) in bytes.iter().enumerate() {
            let (at, slot) = self.step(state, byte);
            if slot.check != state {
                break;
            }
            state = at;
            if slot.value != NONE {
                (best_len, best_id) = (i + 1, slot.value);
            }
        }
        (best_id != NONE).then_some((best_len, best_id))
    }

    /// The bytes its array takes.
    pub fn size(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }
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
}
