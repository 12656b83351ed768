// Unigram models in the WebAssembly module: SentencePiece .model files (tests/data/unigram/:
// the sentencepiece test model and ALBERT's spiece.model) against the goldens sentencepiece 0.2.3
// made of them, and a Unigram tokenizer.json (transformers' conversion of the byte-fallback
// test model) against HF tokenizers 0.23.3's (the unigram- files of tests/golden/, written by
// tools/gen_family_goldens.py), T5's and ALBERT's tokenizer.json too, and NLLB's SentencePiece
// BPE without byte fallback (HF's BPE over characters after Metaspace, with a `normalized` mask
// token): the ids and the decoded text. A file whose pipeline has a stage the core does not run (a regex Replace other than
// white space or a run of one character) is refused, naming it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Tokenizer, golden, root } from "../testing/helpers.mjs";

/** A file of tests/data/unigram/, gunzipped. */
function unigramFile(path) {
  return gunzipSync(readFileSync(new URL(`tests/data/unigram/${path}`, root)));
}

const FILES = [
  ["test_sentencepiece.model.gz", "unigram-test_sentencepiece.json.gz", "sentencepiece 0.2.3", "Unigram"],
  ["spiece.model.gz", "unigram-spiece.json.gz", "sentencepiece 0.2.3", "Unigram"],
  [
    "test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz",
    "unigram-test_sentencepiece_with_bytefallback.llama.json.gz",
    "tokenizers 0.23.3",
    "Unigram",
  ],
  ["t5-small/tokenizer.json.gz", "unigram-t5-small.json.gz", "tokenizers 0.23.3", "Unigram"],
  ["spiece.albert.tokenizer.json.gz", "unigram-spiece.albert.json.gz", "tokenizers 0.23.3", "Unigram"],
  [
    "test_sentencepiece_bpe.nllb.tokenizer.json.gz",
    "unigram-test_sentencepiece_bpe.nllb.json.gz",
    "tokenizers 0.23.3",
    "CharacterBpe",
  ],
];

for (const [path, goldenFile, oracle, model] of FILES) {
  test(`${path}: ${oracle}'s ids and decoded text`, async () => {
    const file = golden(goldenFile);
    assert.equal(file.oracle, oracle);
    const tok = await Tokenizer.fromVocabData(path, unigramFile(path));
    try {
      assert.equal(tok.model, model);
      assert.equal(tok.vocabSize, file.n_vocab);
      // sentencepiece never finds a control piece's text in the text; HF matches it.
      const options = oracle.startsWith("sentencepiece") ? {} : { allowedSpecial: "all" };
      for (const { text, ids, decoded } of file.cases) {
        const got = tok.encode(text, options);
        assert.deepEqual(Array.from(got), ids, JSON.stringify(text));
        assert.equal(tok.decode(got), decoded, JSON.stringify(text));
      }
      for (const c of file.decode_cases) {
        assert.equal(tok.decode(c.ids), c.decoded, JSON.stringify(c.ids));
        if (c.decoded_skip_special !== undefined) {
          assert.equal(tok.decode(c.ids, { skipSpecialTokens: true }), c.decoded_skip_special, JSON.stringify(c.ids));
        }
      }
    } finally {
      tok.free();
    }
  });
}

test("a Unigram tokenizer.json with a normalizer the core does not run is refused, naming it", async () => {
  const file = {
    model: { type: "Unigram", unk_id: 0, vocab: [["<unk>", 0.0], ["\u2581a", -1.0], ["a", -2.0]] },
    normalizer: { type: "Replace", pattern: { Regex: "\\d+" }, content: "0" },
    pre_tokenizer: { type: "Metaspace", replacement: "\u2581", add_prefix_space: true },
    decoder: { type: "Metaspace", replacement: "\u2581", add_prefix_space: true },
  };
  await assert.rejects(
    Tokenizer.fromVocabData("tokenizer.json", new TextEncoder().encode(JSON.stringify(file))),
    (e) => e.kind === "FormatError" && /Replace of the regex "\\\\d\+"/.test(e.message),
  );
});
