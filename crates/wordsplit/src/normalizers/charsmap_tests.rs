use super::*;
use crate::normalizers::charsmap_build::compile;
use crate::testing::xorshift;

const RULES: &[(&str, &str)] = &[
    ("Ａ", "A"),
    ("ﬁ", "fi"),
    ("e\u{301}", "é"),
    ("e\u{301}\u{302}", "ế"),
    ("\u{200b}", ""),
    ("①", "1"),
    ("\u{3000}", " "),
];

fn map() -> CharsMap {
    CharsMap::parse(&compile(RULES)).unwrap()
}

#[test]
fn a_compiled_map_reads_back_its_rules() {
    let map = map();
    assert_eq!(map.len(), RULES.len());
    for (key, output) in RULES {
        assert_eq!(map.get(key), Some(*output), "{key:?}");
    }
    assert_eq!(map.get("e"), None);
    assert_eq!(map.get("x"), None);
    let text = "e\u{301}\u{302}x";
    let found: Vec<_> = map.prefixes(text.as_bytes()).collect();
    assert_eq!(found, [(3, "é"), (5, "ế")]);
    assert_eq!(map.longest(text.as_bytes()), Some((5, "ế")));
    assert_eq!(map.shortest(text.as_bytes()), Some((3, "é")));
    assert!(map.starts_with_byte(b'e') && !map.starts_with_byte(b'x'));
    assert!(CharsMap::parse(&compile(&[])).unwrap().is_empty());
}

#[test]
fn malformed_maps_are_refused_with_what_is_wrong() {
    let message = |data: &[u8]| match CharsMap::parse(data) {
        Err(Error::VocabFormat(message)) => message,
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("accepted {data:?}"),
    };
    assert!(message(b"").contains("starts with its trie's size"));
    assert!(message(&[9, 0, 0, 0, 1, 2]).contains("a trie of 9 bytes"));
    assert!(message(&[6, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0]).contains("a trie of 6 bytes"));
    // A root whose children start at 2, and its child for byte 1 (at 2 ^ 1) whose own
    // children start there too: the links loop.
    let units = [2u32 << 10, 0, 0, (1 << 10) | 1];
    let mut looping = 16u32.to_le_bytes().to_vec();
    units
        .iter()
        .for_each(|u| looping.extend_from_slice(&u.to_le_bytes()));
    assert!(message(&looping).contains("loop"));
    // A key whose output is past the outputs.
    let mut data = compile(&[("a", "b")]);
    data.truncate(data.len() - 2);
    assert!(message(&data).contains("past the 0 bytes"));
    // An output that is not UTF-8.
    let mut data = compile(&[("a", "é")]);
    let n = data.len();
    data[n - 2] = 0xFF;
    assert!(message(&data).contains("not UTF-8"));
    assert!(CharsMap::of_base64("%%").is_err());
}

#[test]
fn a_key_cut_inside_a_character_is_refused() {
    // The trie of "é" (C3 A9) with the leaf moved up to C3.
    let data = compile(&[("é", "x")]);
    let map = CharsMap::parse(&data).unwrap();
    assert_eq!(map.get("é"), Some("x"));
    let mut units: Vec<u32> = data
        [4..4 + (u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize)]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let c3 = (0..units.len())
        .find(|&i| units[i] & 0x8000_00FF == 0xC3)
        .unwrap();
    units[c3] |= 1 << 8;
    let mut broken = data[..4].to_vec();
    units
        .iter()
        .for_each(|u| broken.extend_from_slice(&u.to_le_bytes()));
    broken.extend_from_slice(&data[4 + units.len() * 4..]);
    assert!(
        matches!(CharsMap::parse(&broken), Err(Error::VocabFormat(m)) if m.contains("outside the trie") || m.contains("not whole UTF-8"))
    );
}

#[test]
fn one_byte_keys_and_the_plain_ascii_range() {
    let map = map();
    // (keys start with "e", none is "e" alone; no ASCII byte is a key alone)
    assert!(!map.is_byte_key(b'e') && map.starts_with_byte(b'e'));
    assert_eq!(
        map.plain_ascii(),
        (0x0E, 0x7F - 0x0E),
        "after CR, to the end of ASCII"
    );
    let rules = [
        ("\r", "R"),
        ("\t", " "),
        ("~", "-"),
        ("a", "A"),
        ("a\u{301}", "á"),
    ];
    let map = CharsMap::parse(&compile(&rules)).unwrap();
    assert!(map.is_byte_key(b'a') && map.is_byte_key(b'\t') && !map.is_byte_key(b'b'));
    // (the widest run: after CR up to before "a")
    assert_eq!(map.plain_ascii(), (0x0E, b'a' - 0x0E - 1));
    let every: Vec<(String, &str)> = (0..0x80u8)
        .filter(|&b| b != b'\r')
        .map(|b| (char::from(b).to_string(), "x"))
        .collect();
    let rules: Vec<(&str, &str)> = every.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let map = CharsMap::parse(&compile(&rules)).unwrap();
    assert_eq!(map.plain_ascii(), (0, 0), "NUL alone: no key is NUL");
}

#[test]
fn a_character_is_a_key_alone_where_get_finds_it() {
    let rules = [
        ("Ａ", "A"),
        ("a", "b"),
        ("é", "e"),
        ("e\u{301}", "é"),
        ("😀", ":)"),
    ];
    for map in [map(), CharsMap::parse(&compile(&rules)).unwrap()] {
        for c in (0..BMP as u32).filter_map(char::from_u32) {
            let key = map.get(c.encode_utf8(&mut [0; 4])).is_some();
            assert_eq!(map.is_char_key(c as u32), key, "{c:?}");
        }
    }
}

/// Every lookup of every text on a map the parser accepted stays inside it, and its
/// characters' bits say what [`CharsMap::get`] finds.
fn exercise(map: &CharsMap) {
    for text in [
        "Ａe\u{301}\u{302}ﬁ x",
        "\u{3000}\u{200b}",
        "é",
        "\0\u{1}\u{ff}",
    ] {
        // (NUL aside: the byte 0 is Darts' end of a key, which a garbled map may have a
        // value under; `is_char_key` serves characters of two and three bytes)
        for c in text.chars().filter(|&c| c != '\0') {
            let key = map.get(c.encode_utf8(&mut [0; 4])).is_some();
            assert_eq!(map.is_char_key(c as u32), key, "{c:?}");
        }
        for i in 0..text.len() {
            let _ = map.longest(&text.as_bytes()[i..]);
            let _ = map.shortest(&text.as_bytes()[i..]);
        }
        let _ = crate::normalizers::precompiled::normalize(map, text);
        let _ = crate::normalizers::precompiled::changes(map, text);
    }
}

#[test]
fn truncated_and_garbled_maps_are_refused_or_read_never_a_panic() {
    let data = compile(RULES);
    for n in 0..data.len() {
        if let Ok(map) = CharsMap::parse(&data[..n]) {
            exercise(&map);
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let mut accepted = 0;
    for _ in 0..3000 {
        let mut garbled = data.clone();
        for _ in 0..1 + xorshift(&mut state) % 4 {
            let at = (xorshift(&mut state) as usize) % garbled.len();
            garbled[at] ^= 1 << (xorshift(&mut state) % 8);
        }
        if let Ok(map) = CharsMap::parse(&garbled) {
            accepted += 1;
            exercise(&map);
        }
    }
    // (some flips land in outputs or unused units and leave a valid map)
    assert!(accepted > 0);
    // Random bytes after a plausible size.
    for len in [8usize, 16, 64, 256] {
        for _ in 0..200 {
            let mut blob = ((len as u32) * 4).to_le_bytes().to_vec();
            blob.extend((0..len * 4 + 8).map(|_| xorshift(&mut state) as u8));
            if let Ok(map) = CharsMap::parse(&blob) {
                exercise(&map);
            }
        }
    }
}
