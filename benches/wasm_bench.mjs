// The Node side of benches/wasm_bench.py: a worker that times one encode at a time, so the
// Python side can interleave its own timings with these (paired under the same load).
// argv: [wasm file]. Reads one JSON request per line on stdin and answers one JSON line each:
//   {"vocab": name}                 load that vocabulary (its bundled file)  -> {"ok": true}
//   {"text": path}                  read that UTF-8 text file                -> {"ok": true}
//   {"encode": true}                encode the text once, timed              -> {"seconds", "ids"}
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { gunzipSync } from "node:zlib";
import { Tokenizer, VOCAB_FILES, init } from "../wasm/dist/wordsplit.js";

const [wasm] = process.argv.slice(2);
if (wasm) await init(readFileSync(wasm));
const root = new URL("../", import.meta.url);
let tok = null;
let text = "";
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  let answer = { ok: true };
  if (request.vocab) {
    tok?.free();
    const file = new URL(`src/wordsplit/vocabs/data/${VOCAB_FILES[request.vocab]}.gz`, root);
    tok = await Tokenizer.fromVocabData(request.vocab, gunzipSync(readFileSync(file)));
  } else if (request.text) {
    text = readFileSync(request.text, "utf8");
  } else if (request.encode) {
    const start = performance.now();
    const ids = tok.encode(text).length;
    answer = { seconds: (performance.now() - start) / 1000, ids };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
