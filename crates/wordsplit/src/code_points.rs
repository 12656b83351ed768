//! Sets of code points as inclusive `(first, last)` ranges, sorted and disjoint: how the
//! generated class tables hold them, and what [`contains`] searches.

/// The union of `parts` (ranges in any order, overlapping or not), sorted, with overlapping
/// and adjacent ranges merged.
///
/// ```text
/// union(&[&[(5, 9)], &[(0, 2), (3, 4), (8, 12)]]) == [(0, 12)]
/// ```
pub(crate) fn union(parts: &[&[(u32, u32)]]) -> Vec<(u32, u32)> {
    let mut all: Vec<(u32, u32)> = parts.concat();
    all.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(all.len());
    for (first, last) in all {
        match merged.last_mut() {
            Some(previous) if first <= previous.1 + 1 => previous.1 = previous.1.max(last),
            _ => merged.push((first, last)),
        }
    }
    merged
}

/// The length of the UTF-8 character whose first byte is `lead`.
#[inline]
pub(crate) fn utf8_width(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Whether `cp` is in `ranges` (sorted and disjoint), by binary search.
pub(crate) fn contains(ranges: &[(u32, u32)], cp: u32) -> bool {
    let at = ranges.partition_point(|&(_, last)| last < cp);
    ranges.get(at).is_some_and(|&(first, _)| first <= cp)
}

#[cfg(test)]
mod tests {
    use super::{contains, union};

    #[test]
    fn a_union_merges_overlapping_and_adjacent_ranges() {
        assert_eq!(union(&[&[(5, 9)], &[(0, 2), (3, 4), (8, 12)]]), [(0, 12)]);
        assert_eq!(
            union(&[&[(20, 20), (0, 1)], &[(3, 3)]]),
            [(0, 1), (3, 3), (20, 20)]
        );
        assert!(union(&[]).is_empty());
    }

    #[test]
    fn contains_finds_exactly_the_members() {
        let ranges = [(0, 1), (3, 3), (20, 25)];
        let members: Vec<u32> = (0..30).filter(|&cp| contains(&ranges, cp)).collect();
        assert_eq!(members, [0, 1, 3, 20, 21, 22, 23, 24, 25]);
    }
}
