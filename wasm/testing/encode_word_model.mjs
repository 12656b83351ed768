// Encode texts with a word-model tokenizer.json of tests/data/wordpiece/ in the WebAssembly
// module, for the Python tests that compare it with the Python package and HF tokenizers:
// stdin {"folder": name, "texts": [...]} -> stdout {"ids": [[...]], "offsets": [[[s, e], ...]],
// "decoded": [...], "with_specials": [[...]], "special_offsets": [[[s, e], ...]]}.
import { readFileSync } from "node:fs";
import { Tokenizer, tokenizerJson } from "./helpers.mjs";

const { folder, texts } = JSON.parse(readFileSync(0, "utf8"));
const tok = await Tokenizer.fromVocabData(folder, tokenizerJson(folder));
const plain = texts.map((text) => tok.encoding(text, { addSpecialTokens: false }));
const full = texts.map((text) => tok.encoding(text));
process.stdout.write(
  JSON.stringify({
    ids: plain.map((e) => Array.from(e.ids)),
    offsets: plain.map((e) => e.offsets),
    decoded: plain.map((e) => tok.decode(e.ids)),
    with_specials: full.map((e) => Array.from(e.ids)),
    special_offsets: full.map((e) => e.offsets),
  }),
);
