// The golden ids of every bundled vocabulary (tests/golden/, made by tiktoken and HF
// tokenizers, the files the Python and Rust suites check): the WebAssembly module gives the
// same ids, and decodes them back to the text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { golden, tokenizer } from "../testing/helpers.mjs";

const TIKTOKEN = ["cl100k_base", "o200k_base", "o200k_harmony", "r50k_base", "gpt2", "p50k_base", "p50k_edit"];

function check(name, cases, encode) {
  assert.ok(cases.length > 0, `${name}: no cases`);
  for (const { text, ids } of cases) {
    assert.deepEqual(Array.from(encode(text)), ids, `${name}: ${JSON.stringify(text)}`);
  }
  return cases.length;
}

for (const name of TIKTOKEN) {
  test(`${name}: the golden ids of tiktoken`, async () => {
    const file = golden(`tiktoken-${name}.json.gz`);
    const tok = await tokenizer(name);
    assert.equal(tok.vocabSize, file.n_vocab);
    const n = check(name, file.cases, (t) => tok.encode(t));
    const m = check(name, file.special_cases, (t) => tok.encode(t, { allowedSpecial: "all" }));
    assert.ok(n > 100 && m > 0, `${name}: ${n} cases, ${m} special cases`);
    const batch = tok.encodeBatch(file.cases.map((c) => c.text));
    assert.deepEqual(batch.map((ids) => Array.from(ids)), file.cases.map((c) => c.ids));
    for (const { text, ids } of file.cases) {
      // Text whose ids spell whole characters decodes back to it.
      if (!text.includes("\ufffd")) assert.equal(tok.decode(ids), text, `${name}: decode ${JSON.stringify(text)}`);
      assert.equal(tok.count(text), ids.length);
    }
  });
}

test("qwen3: the golden ids of HF tokenizers", async () => {
  // HF matches every added token in text, special ones too: allow them all.
  const file = golden("qwen3-tokenizers.json.gz");
  const tok = await tokenizer("qwen3");
  const n = check("qwen3", file.cases, (t) => tok.encode(t, { allowedSpecial: "all" }));
  assert.ok(n > 100, `${n} cases`);
});
