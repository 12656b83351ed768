// HF's WordPiece and WordLevel tokenizer.json files (tests/data/wordpiece/: all-MiniLM-L6-v2,
// the Chinese and multilingual BERTs, ...) in the WebAssembly module, against the goldens HF
// tokenizers 0.23.3 made of them (the wordpiece- and wordlevel- files of tests/golden/): the ids, the ids
// with the post-processor's special tokens, type ids and offsets, pairs, and decode with and
// without the special tokens; and HF's BPE over characters (CharacterBpe: CLIP's tokenizer.json
// with its `</w>` suffix over bytes, tokenizer-wiki's and Tortoise's over characters) against the
// bpe- goldens, the same way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Tokenizer, golden, tokenizerJson } from "../testing/helpers.mjs";

const WORD_MODELS = {
  "all-MiniLM-L6-v2": "wordpiece",
  "bert-base-chinese": "wordpiece",
  "bert-base-multilingual-cased": "wordpiece",
  "bert-wiki": "wordpiece",
  "fastberttokenizer-issue-100": "wordpiece",
  "genslm-codon-wordlevel": "wordlevel",
  "clip-vit-base-patch32": "bpe",
  "tokenizer-wiki": "bpe",
  "tortoise": "bpe",
};

function checkEncoding(tok, text, pair, expected) {
  const got = tok.encoding(text, { pair });
  const what = `${tok.name}: ${JSON.stringify(text)} ${JSON.stringify(pair)}`;
  assert.deepEqual(Array.from(got.ids), expected.ids, what);
  assert.deepEqual(Array.from(got.typeIds), expected.type_ids, what);
  assert.deepEqual(got.offsets, expected.offsets, what);
  assert.equal(tok.decode(got.ids), expected.decoded, what);
  assert.equal(tok.decode(got.ids, { skipSpecialTokens: true }), expected.decoded_skip_special, what);
}

for (const [folder, family] of Object.entries(WORD_MODELS)) {
  test(`${folder}: HF's ids, offsets and decoded text`, async () => {
    const file = golden(`${family}-${folder}.json.gz`);
    const tok = await Tokenizer.fromVocabData(folder, tokenizerJson(folder));
    try {
      // (HF's BPE over characters is the CharacterBpe model here)
      assert.equal(tok.model, file.model === "BPE" ? "CharacterBpe" : file.model);
      assert.equal(tok.vocabSize, file.n_vocab);
      for (const { text, ids, decoded, with_specials } of file.cases) {
        // HF matches the special tokens in the text too.
        assert.deepEqual(Array.from(tok.encode(text, { allowedSpecial: "all" })), ids, JSON.stringify(text));
        assert.deepEqual(Array.from(tok.encoding(text, { addSpecialTokens: false }).ids), ids, JSON.stringify(text));
        assert.equal(tok.decode(ids), decoded, JSON.stringify(text));
        checkEncoding(tok, text, undefined, with_specials);
      }
      for (const c of file.pair_cases) checkEncoding(tok, c.text, c.pair, c);
      for (const c of file.decode_cases) {
        assert.equal(tok.decode(c.ids), c.decoded, JSON.stringify(c.ids));
        assert.equal(tok.decode(c.ids, { skipSpecialTokens: true }), c.decoded_skip_special, JSON.stringify(c.ids));
      }
    } finally {
      tok.free();
    }
  });
}

test("all-MiniLM-L6-v2: the JavaScript API on a BERT vocabulary", async () => {
  const tok = await Tokenizer.fromVocabData("all-MiniLM-L6-v2", tokenizerJson("all-MiniLM-L6-v2"));
  assert.equal(tok.model, "WordPiece");
  assert.deepEqual(Array.from(tok.encoding("Hello, world!").ids), [101, 7592, 1010, 2088, 999, 102]);
  assert.deepEqual(tok.getSpecialTokens(), { "[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103 });
  assert.equal(tok.idToToken(3468), "##ble");
  assert.equal(tok.tokenToId("##ble"), 3468);
  // Special-token text is plain text unless allowed, as for every vocabulary.
  assert.deepEqual(Array.from(tok.encode("[SEP]", { allowedSpecial: "all" })), [102]);
  assert.deepEqual(Array.from(tok.encode("[SEP]")), [1031, 19802, 1033]); // "[", "sep", "]"
  assert.equal(tok.count("Unaffable"), 3);
  const trace = tok.explain("Unaffable!", { allowedSpecial: "all" });
  assert.deepEqual(trace.pieces.map((p) => [p.kind, p.text, p.ids]), [
    ["wordpiece", "Unaffable", [14477, 20961, 3468]],
    ["wordpiece", "!", [999]],
  ]);
  assert.throws(() => tok.decode([30522]), (e) => e.kind === "UnknownIdError");
  tok.free();
});

test("clip-vit-base-patch32: a dropped CLIP tokenizer.json encodes and decodes as HF's", async () => {
  const tok = await Tokenizer.fromVocabData("clip-vit-base-patch32", tokenizerJson("clip-vit-base-patch32"));
  try {
    assert.equal(tok.model, "CharacterBpe");
    // HF tokenizers 0.23.3: "<|startoftext|>", "a</w>", "photo</w>", "of</w>", "a</w>", "cat</w>", ".</w>", "<|endoftext|>"
    const encoding = tok.encoding("A photo of a cat.");
    assert.deepEqual(Array.from(encoding.ids), [49406, 320, 1125, 539, 320, 2368, 269, 49407]);
    assert.deepEqual(encoding.offsets, [[0, 0], [0, 1], [2, 7], [8, 10], [11, 12], [13, 16], [16, 17], [0, 0]]);
    // HF's ByteLevel decoder keeps the suffix: the tokens' bytes, concatenated.
    assert.equal(tok.decode(encoding.ids, { skipSpecialTokens: true }), "a</w>photo</w>of</w>a</w>cat</w>.</w>");
    assert.equal(tok.tokenToId("cat</w>"), 2368);
  } finally {
    tok.free();
  }
});
