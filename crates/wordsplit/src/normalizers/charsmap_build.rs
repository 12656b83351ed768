//! The bytes of a precompiled character map made from rules ([`compile`]): the format
//! [`CharsMap::parse`](super::charsmap::CharsMap::parse) reads, for maps of one's own (tests,
//! examples); sentencepiece's own maps are made by its trainer.
//!
//! ```
//! use wordsplit::normalizers::charsmap::CharsMap;
//! use wordsplit::normalizers::charsmap_build::compile;
//! let map = CharsMap::parse(&compile(&[("Ａ", "A"), ("ﬁ", "fi")])).unwrap();
//! assert_eq!((map.len(), map.get("ﬁ"), map.get("x")), (2, Some("fi"), None));
//! ```

use std::collections::BTreeMap;

/// A node of the rules' trie while it is laid out.
#[derive(Default)]
struct Node {
    children: BTreeMap<u8, Node>,
    /// The offset of its key's output, when its key is a rule's.
    value: Option<u32>,
}

/// The map of `rules` (key → output; keys non-empty, without NUL bytes; a later rule of the
/// same key replaces an earlier one): a trie size, a double-array trie laid out a node at a
/// time at the first free place, and the NUL-terminated outputs.
pub fn compile(rules: &[(&str, &str)]) -> Vec<u8> {
    let mut root = Node::default();
    let mut outputs: Vec<u8> = Vec::new();
    for (key, output) in rules {
        let mut node = &mut root;
        for &b in key.as_bytes() {
            node = node.children.entry(b).or_default();
        }
        node.value = Some(outputs.len() as u32);
        outputs.extend_from_slice(output.as_bytes());
        outputs.push(0);
    }
    let mut units: Vec<Option<u32>> = vec![Some(0)];
    let mut bases = std::collections::HashSet::new();
    place(&root, 0, &mut units, &mut bases);
    let mut data = Vec::new();
    data.extend_from_slice(&((units.len() * 4) as u32).to_le_bytes());
    for unit in units {
        data.extend_from_slice(&unit.unwrap_or(0).to_le_bytes());
    }
    data.extend_from_slice(&outputs);
    data
}

/// Lays out the children of `node`, whose unit is at `at`, and below them.
fn place(
    node: &Node,
    at: usize,
    units: &mut Vec<Option<u32>>,
    bases: &mut std::collections::HashSet<usize>,
) {
    if node.children.is_empty() && node.value.is_none() {
        return;
    }
    let free = |units: &Vec<Option<u32>>, i: usize| units.get(i).is_none_or(|u| u.is_none());
    let base = (1..)
        .find(|&base: &usize| {
            !bases.contains(&base)
                && base ^ at < 1 << 21
                && (node.value.is_none() || free(units, base))
                && node
                    .children
                    .keys()
                    .all(|&c| free(units, base ^ usize::from(c)))
        })
        .unwrap_or(0);
    bases.insert(base);
    let needed = node
        .children
        .keys()
        .map(|&c| base ^ usize::from(c))
        .chain([base]);
    let last = needed.max().unwrap_or(base);
    if units.len() <= last {
        units.resize(last + 1, None);
    }
    // This node's unit: its label (kept), whether it ends a key, the offset to its children.
    let unit = units[at].unwrap_or(0);
    let leaf = if node.value.is_some() { 1 << 8 } else { 0 };
    units[at] = Some((((base ^ at) as u32) << 10) | leaf | (unit & 0x8000_00FF));
    if let Some(value) = node.value {
        units[base] = Some(0x8000_0000 | value);
    }
    for &c in node.children.keys() {
        units[base ^ usize::from(c)] = Some(u32::from(c));
    }
    for (&c, child) in &node.children {
        place(child, base ^ usize::from(c), units, bases);
    }
}
