// Encode speed of the WebAssembly module in Node: argv = wasm file, then (vocab, text file)
// pairs... reads JSON {"vocab": [...], "texts": {name: path}, "repeat": n} on stdin and prints
// {vocab: {text: {"seconds": best of n, "ids": count}}}. Run by benches/wasm_bench.py.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Tokenizer, VOCAB_FILES, init } from "../wasm/dist/wordsplit.js";

const { vocabs, texts, repeat, wasm } = JSON.parse(readFileSync(0, "utf8"));
if (wasm) await init(readFileSync(wasm));
const root = new URL("../", import.meta.url);
const out = {};
for (const vocab of vocabs) {
  const file = new URL(`src/wordsplit/vocabs/data/${VOCAB_FILES[vocab]}.gz`, root);
  const tok = await Tokenizer.fromVocabData(vocab, gunzipSync(readFileSync(file)));
  out[vocab] = {};
  for (const [name, path] of Object.entries(texts)) {
    const text = readFileSync(path, "utf8");
    let best = Infinity;
    let ids = 0;
    tok.encode(text); // warm: lazy tables, JIT
    for (let i = 0; i < repeat; i++) {
      const start = performance.now();
      ids = tok.encode(text).length;
      best = Math.min(best, performance.now() - start);
    }
    out[vocab][name] = { seconds: best / 1000, ids };
  }
  tok.free();
}
process.stdout.write(JSON.stringify(out));
