"""llama.cpp's pre-tokenizers: each ``tokenizer.ggml.pre`` name a GGUF file can carry, with the
regexes llama.cpp applies for it, and the spanner stage that splits as llama.cpp does.

>>> LLAMA_CPP_PRE_REGEXES["gpt-2"] == (LLAMA_CPP_PRE_PATTERNS["gpt-2"].pattern,)  # one regex that matches any text
True
>>> len(LLAMA_CPP_PRE_REGEXES["deepseek-llm"]), type(LLAMA_CPP_PRE_PATTERNS["deepseek-llm"]).__name__  # several
(6, 'SplitProgram')
"""

from __future__ import annotations

from ...errors import UnsupportedTokenizerError, closest
from ...spec import RegexSplit, Stage
from ...split_programs import split_program
from ._classes import P as _P_RANGES
from ._classes import S as _S_RANGES

__all__ = ["LLAMA_CPP_PRE_PATTERNS", "LLAMA_CPP_PRE_REGEXES", "IGNORE_MERGES", "pre_pattern"]

# llama.cpp's pre-tokenizers. The names and regexes are those of llama.cpp's src/llama-vocab.cpp
# at commit 0c1e5709 (vendored by llama-cpp-python 0.3.36, which also made the GGUF test
# files): `llama_vocab::impl::load` maps `tokenizer.ggml.pre` to a LLAMA_VOCAB_PRE_TYPE_*, the
# `llm_tokenizer_bpe` constructor gives each type a list of regexes, and unicode.cpp's
# `unicode_regex_split` applies them in turn: each regex to every piece the previous ones made,
# keeping the text between its matches as pieces of their own. That is an HF `Split` with
# behavior "Isolated" per regex, so a list of several regexes becomes a split program
# (wordsplit.spanners.hf_split), run with HF's semantics; a single regex that matches any text
# completely stays a plain pattern, since a findall-style splitter then gives the same pieces
# (and a hand-written scanner may be proven for it).
#
# The regexes are written as llama.cpp writes them and run with Unicode 16.0 classes, as HF
# tokenizers (the oracle of llama.cpp's own test files) runs the originals. Where llama.cpp's
# engine departs from that, wordsplit does what the regex says, not what the engine does:
# llama.cpp runs a regex with \p{..} on a "collapsed" text (every non-ASCII code point replaced
# by one byte per category) and the others on std::wregex, which replaces non-ASCII whitespace
# by U+000B, so e.g. deepseek-llm's class "[...\u3000-。]" never sees U+3000 in llama.cpp.
# Three regexes are not regexes for llama.cpp but select hand-written splitters ("\p{Han}+" for
# kimi-k2, "\p{AFMoE_digits}" for afmoe, tiny_aya's digit regex): they are replaced by the
# regexes those splitters implement. superbpe's `\d` is written [0-9], what std::regex means.

# llama.cpp's unicode_cpt_is_han (kimi-k2): these blocks, not the Unicode Script=Han property.
_HAN_RANGES = (
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2CEB0, 0x2EBEF), (0x2F800, 0x2FA1F),
)


def _class_body(ranges) -> str:
    """Inclusive code point ranges as the inside of a regex character class."""
    return "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)


def _letters_but_han() -> tuple[tuple[int, int], ...]:
    """Unicode 16.0 \\p{L} minus :data:`_HAN_RANGES` (kimi-k2's letters)."""
    from ..._unicode16 import L

    out = []
    for lo, hi in L:
        for han_lo, han_hi in _HAN_RANGES:
            if han_hi < lo or han_lo > hi:
                continue
            if han_lo > lo:
                out.append((lo, han_lo - 1))
            lo = han_hi + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


# Class names the regex translator does not know, spelled out as explicit ranges.
_SPELLED_CLASSES = {
    r"\p{P}": _class_body(_P_RANGES),
    r"\p{S}": _class_body(_S_RANGES),
    r"\p{Han}": _class_body(_HAN_RANGES),
    r"\p{L_but_Han}": _class_body(_letters_but_han()),  # wordsplit's name, for kimi-k2 only
}


def _spelled(regex: str) -> str:
    r"""``regex`` with the classes of :data:`_SPELLED_CLASSES` written as ranges.

    >>> _spelled(r"[\p{Han}a]|\p{Han}")[:22]
    '[\\x{3400}-\\x{4DBF}\\x{4'
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            name = next((n for n in _SPELLED_CLASSES if regex.startswith(n, i)), None)
            if name is None:
                out.append(regex[i:i + 2])
                i += 2
                continue
            body = _SPELLED_CLASSES[name]
            out.append(body if in_class else f"[{body}]")
            i += len(name)
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if regex.startswith("^", i + 1):
                out.append("^")
                i += 1
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


# -- the regexes, as llama.cpp's llm_tokenizer_bpe writes them --------------------------------

_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
# GPT-2's regex as llama.cpp writes it, without the final `\s+`: llama.cpp runs it with its
# hand-written unicode_regex_split_custom_gpt2, which ends with `\s+` (unicode.cpp: "regex:
# \s+"); as a split step the two are the same, since the only text the shorter form leaves
# unmatched is a single whitespace character before a non-space, which `\s+` would match alone.
_GPT2_LLAMA_CPP = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"

# LLAMA_VOCAB_PRE_TYPE_GPT2 (and MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING): with the `\s+`
# written out this is GPT-2's original pattern, character for character.
_GPT2 = _GPT2_LLAMA_CPP + r"|\s+"
# LLAMA3, DBRX, SMAUG, CHATGLM4. llama.cpp spells (?i:'s|...) as explicit case classes, which
# differs from (?i:) on "'ſ" (U+017F folds to s): llama.cpp's form is kept.
_LLAMA3 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# QWEN2, STABLELM2, HUNYUAN, SOLAR_OPEN, GROK_2: llama3's with one digit per piece.
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN35 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# BAILINGMOE: llama.cpp's comment says it changed the original's possessive quantifiers to
# greedy ones; this is what llama.cpp runs.
_BAILINGMOE = (
    r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"
)
_SEED_CODER = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# UFAKZEKA: qwen2's without the contractions.
_UFAKZEKA = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_EXAONE_MOE = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
)
_JAIS2 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)"
    r"|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"
)
# GPT4O, MINIMAX_M2: o200k's original pattern, which llama.cpp keeps as a comment. CAVEAT:
# llama.cpp cannot run \p{Lu}/\p{Ll}; it runs an approximation with lookaheads in which a
# letter is "upper" unless it is a-z and "lower" unless it is A-Z, so every non-ASCII letter
# counts as both. On text with a non-ASCII case change (e.g. "aÉ") llama.cpp's pieces differ
# from this pattern's (which are tiktoken's and HF's).
_GPT4O = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# TEKKEN: Mistral's pattern from tokenizer.json, which llama.cpp keeps as a comment; the same
# CAVEAT as GPT4O about the lookahead approximation llama.cpp runs instead.
_TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# GRANITE_EMB_MULTI: llama.cpp's lookahead form is the only one (no original is recorded), and
# it means what it says under any Unicode-aware engine: a letter or mark other than a-z counts
# as "upper", one other than A-Z as "lower".
_GRANITE_EMB_MULTI = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# TINY_AYA (\p{N}{1,3}) and YOUTU (\p{N}): o200k's words with llama.cpp's contractions.
def _o200k_like(digits: str) -> str:
    return (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CONTRACTIONS + "?"
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CONTRACTIONS + "?"
        "|" + digits + r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
# llama.cpp's unicode_regex_split_custom_afmoe (used for afmoe's "\p{AFMoE_digits}" and for
# tiny_aya's "\d{1,3}(?=(?:\d{3})*\b)"): a run of numbers is cut into its first len % 3
# characters, then threes. At the start of a run the greedy {1,3} backs off until the rest of
# the run is a whole number of threes.
_DIGITS_BY_THREE_FROM_THE_RIGHT = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"
# llama.cpp's unicode_regex_split_custom_kimi_k2, which stands for Kimi K2's pattern
# "[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}...]+(?i:'s|...)?|...",
# written as the regex it implements: it does not tell upper from lower case and takes letters
# only (no marks), "Han" is its own list of blocks (_HAN_RANGES), and a contraction compares
# the lowercased letters. (On unassigned code points, which its tables give no class, the
# splitter makes one piece per character where this regex may make one of several.)
_KIMI_K2 = (
    r"\p{Han}+|[^\r\n\p{L}\p{N}]?\p{L_but_Han}+" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_CJK_LLM = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"  # deepseek-llm and deepseek-coder (U+D7FF is not a surrogate)
_ASCII_PUNCT_WORD = r"[!" '"' r"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"
# (llama.cpp writes CR and LF as the characters here, not as regex escapes.)
_DEEPSEEK3_WORDS = (
    _ASCII_PUNCT_WORD + "|[^\r\n" r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+" "[\r\n]*"
    r"|\s*" "[\r\n]+" r"|\s+(?!\S)|\s+"
)
_KANA_HAN = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
_PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

# Each pre-tokenizer type: its regexes, in order, and the `tokenizer.ggml.pre` names llama.cpp
# maps to it. One regex that matches any text is used as a plain pattern.
_PRE_TYPES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    ((_GPT2,), (
        "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4",  # GPT2
        "mpt", "olmo", "jais", "trillion", "granite-docling",
    )),
    ((_LLAMA3,), (
        "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano",  # LLAMA3
        "dbrx", "smaug-bpe", "chatglm-bpe", "glm4", "glm5",
    )),
    ((_QWEN2,), (
        "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez",  # QWEN2
        "stablelm2", "hunyuan", "solar-open", "grok-2",
    )),
    ((_QWEN35,), ("qwen35",)),
    ((_BAILINGMOE,), ("bailingmoe", "bailingmoe2", "llada-moe")),
    ((_SEED_CODER,), ("seed-coder",)),
    ((_UFAKZEKA,), ("ufakzeka",)),
    ((_EXAONE_MOE,), ("exaone-moe",)),
    ((_JAIS2,), ("jais-2",)),
    ((_GPT4O,), ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")),
    ((_TEKKEN,), ("tekken",)),
    ((_GRANITE_EMB_MULTI,), ("granite-embed-multi-97m",)),
    # DEFAULT: also what llama.cpp uses for a GGUF without tokenizer.ggml.pre.
    ((r"[\p{P}\$\+<=>\^~\|]+", _GPT2_LLAMA_CPP, r"\p{N}+", "[0-9][0-9][0-9]"), ("default",)),
    (("[\r\n]",
      # (Written with escapes: it holds letters such as U+1F7D and U+212A that NFC would change.)
      "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
      "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
      "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
      "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
      "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
      "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
      "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
      "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
      "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
      "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+",
      "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", r"\s+$", _CJK_LLM, r"\p{N}+"),
     ("deepseek-llm",)),
    (("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_LLM, r"\p{N}"), ("deepseek-coder",)),
    ((r"\p{N}{1,3}", _KANA_HAN, _DEEPSEEK3_WORDS), ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4")),
    ((r"\p{N}{1,3}", _KANA_HAN,
      _ASCII_PUNCT_WORD + "|[^\r\n" r"\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+" "|[\r\n]" r"|\s+(?!\S)|\s+",
      r"\p{N}"), ("spark2_5",)),
    (("[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c\u3001-\u303f"
      "\ufe30-\ufe4f]+|[\u3105-\u312f]+|" + _KANA_HAN, _o200k_like(r"\p{N}")), ("youtu",)),
    ((r"[\p{P}\$\+<=>\^~\|`]+", _GPT2_LLAMA_CPP, "[0-9][0-9][0-9]"), ("falcon",)),
    ((r"\p{N}", _GPT2_LLAMA_CPP), (
        "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2",
    )),
    ((_PORO,), ("poro-chat", "bloom", "gpt3-finnish")),
    ((_PORO, r"\p{N}"), ("viking",)),
    (("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", r"\p{N}",
      r"[\p{P}!-/:-@\[-`{-~]", _GPT2_LLAMA_CPP), ("chameleon",)),
    ((_DIGITS_BY_THREE_FROM_THE_RIGHT, _o200k_like(r"\p{N}{1,3}")), ("tiny_aya", "cohere2moe")),
    ((_KIMI_K2,), ("kimi-k2",)),
    # SUPERBPE: std::regex's \d is [0-9]. The second regex only matches empty strings: it cuts
    # a run of digits into threes from the right.
    ((r"\p{N}+", "(?=([0-9]{3})+(?![0-9]))"), ("superbpe",)),
    ((_DIGITS_BY_THREE_FROM_THE_RIGHT,
      # (U+8C48, not U+F900: llama.cpp's source has that character there.)
      "[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf\u0e40-\u0e7f"
      "\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+",
      _DEEPSEEK3_WORDS), ("afmoe",)),
    (("[^\\n]+|[\\n]+", _QWEN2), ("laguna",)),
    ((r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
      r"|\s+(?!\S)|\s+"), ("minicpm5",)),
]

# Single regexes that leave text unmatched: llama.cpp keeps that text as pieces, so they run as
# a one-step split program rather than as a findall-style pattern.
_LEAVES_GAPS = frozenset({_PORO})

# Pre-tokenizers llama.cpp runs on raw UTF-8 with no byte-level spelling (`byte_encode =
# false`), for SentencePiece-style vocabularies: not byte-level BPE.
_NOT_BYTE_LEVEL_PRE = frozenset({"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"})


def _vocab_pattern(regexes: tuple[str, ...]) -> Stage:
    """The spanner stage that splits as llama.cpp's ``regexes`` do."""
    if len(regexes) == 1 and regexes[0] not in _LEAVES_GAPS:
        return RegexSplit(_spelled(regexes[0]))
    return split_program([{"pattern": _spelled(r), "behavior": "Isolated", "invert": False} for r in regexes])


#: ``tokenizer.ggml.pre`` name → llama.cpp's regexes for it, in the order it applies them.
LLAMA_CPP_PRE_REGEXES: dict[str, tuple[str, ...]] = {name: regexes for regexes, names in _PRE_TYPES for name in names}

#: ``tokenizer.ggml.pre`` name → the spanner stage that splits as llama.cpp does: a
#: :class:`~wordsplit.spec.RegexSplit` when llama.cpp uses one regex that matches any text,
#: else a :class:`~wordsplit.spec.SplitProgram` of one Isolated step per regex.
LLAMA_CPP_PRE_PATTERNS: dict[str, Stage] = {}
for _regexes, _names in _PRE_TYPES:
    _pattern = _vocab_pattern(_regexes)
    LLAMA_CPP_PRE_PATTERNS.update(dict.fromkeys(_names, _pattern))
del _regexes, _names, _pattern

# The names for which llama.cpp sets `ignore_merges = true`: a piece that is itself a token is
# that token, without running the merges (llm_tokenizer_bpe_session::tokenize). The LLAMA3
# names, glm4/glm5, minicpm5, youtu, tekken and granite-embed-multi-97m; not dbrx, smaug-bpe or
# chatglm-bpe, which share the llama3 regex.
IGNORE_MERGES = frozenset(
    {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
     "glm4", "glm5", "minicpm5", "youtu", "tekken", "granite-embed-multi-97m"}
)


def pre_pattern(pre: str | None, source: str) -> Stage:
    """The spanner stage for ``tokenizer.ggml.pre``; llama.cpp's ``"default"`` when it is missing."""
    if pre is None:
        return LLAMA_CPP_PRE_PATTERNS["default"]
    if pre in _NOT_BYTE_LEVEL_PRE:
        raise UnsupportedTokenizerError(
            f"{source}: llama.cpp's pre-tokenizer {pre!r} (tokenizer.ggml.pre) is for a BPE over raw UTF-8 "
            "(SentencePiece-style, not byte-level); wordsplit reads only byte-level BPE GGUF vocabularies"
        )
    if pre not in LLAMA_CPP_PRE_PATTERNS:
        known = sorted(LLAMA_CPP_PRE_PATTERNS)
        raise UnsupportedTokenizerError(
            f"{source}: unsupported llama.cpp pre-tokenizer {pre!r} (tokenizer.ggml.pre); "
            f"known: {', '.join(known)}.{closest(pre, known)}"
        )
    return LLAMA_CPP_PRE_PATTERNS[pre]
