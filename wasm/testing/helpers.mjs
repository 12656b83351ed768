// Shared by the Node tests: the built module, the bundled vocabulary files and the goldens.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

export const root = new URL("../../", import.meta.url);
export { Tokenizer, WordsplitError, VOCAB_FILES } from "../dist/wordsplit.js";
import { Tokenizer, VOCAB_FILES } from "../dist/wordsplit.js";

/** The bundled rank file of a registered name, gunzipped (src/wordsplit/vocabs/data/). */
export function vocabBytes(name) {
  const file = new URL(`src/wordsplit/vocabs/data/${VOCAB_FILES[name]}.gz`, root);
  return gunzipSync(readFileSync(file));
}

/** A golden file of tests/golden/ (the ids tiktoken and HF tokenizers gave). */
export function golden(file) {
  return JSON.parse(gunzipSync(readFileSync(new URL(`tests/golden/${file}`, root))).toString("utf8"));
}

/** A tokenizer.json of tests/data/wordpiece/<folder>/ (gunzipped when stored so). */
export function tokenizerJson(folder) {
  const dir = new URL(`tests/data/wordpiece/${folder}/`, root);
  try {
    return gunzipSync(readFileSync(new URL("tokenizer.json.gz", dir)));
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
    return readFileSync(new URL("tokenizer.json", dir));
  }
}

const cache = new Map();

/** One tokenizer per name for the whole test file. */
export async function tokenizer(name) {
  if (!cache.has(name)) cache.set(name, await Tokenizer.fromVocabData(name, vocabBytes(name)));
  return cache.get(name);
}
