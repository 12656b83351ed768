// Encode texts with the WebAssembly module, for the Python tests that compare it with the
// Python package: stdin {"vocab": name, "texts": [...]} -> stdout {"ids": [[...]],
// "explain": [[[rank per candidate of pass 0 of each piece], ...]]}.
import { readFileSync } from "node:fs";
import { tokenizer } from "./helpers.mjs";

const { vocab, texts } = JSON.parse(readFileSync(0, "utf8"));
const tok = await tokenizer(vocab);
const ids = texts.map((text) => Array.from(tok.encode(text, { allowedSpecial: "all" })));
const explain = texts.map((text) =>
  tok.explain(text, { allowedSpecial: "all" }).pieces.map((p) => p.passes.map((pass) => pass.winner)),
);
process.stdout.write(JSON.stringify({ ids, explain }));
