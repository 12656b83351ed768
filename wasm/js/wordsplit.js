// wordsplit in JavaScript: exact token ids of byte-level BPE vocabularies and of HF's
// WordPiece, WordLevel, Unigram and BPE-over-characters tokenizer.json files (BERT, all-MiniLM,
// BGE, CLIP) and of
// SentencePiece Unigram .model files (T5's spiece.model), from the wordsplit core
// compiled to WebAssembly (crates/wordsplit-wasm). An ES module for Node 20+ and browsers,
// with hand-written glue: the module's exports take numbers (pointers, lengths, handles), and
// this file moves strings and ids through its memory.
//
//   import { Tokenizer } from "./wordsplit.js";
//   const tok = await Tokenizer.fromVocabData("cl100k_base", rankFileBytes);
//   tok.encode("hello world");            // Uint32Array [15339, 1917]
//   tok.decode([15339, 1917]);            // "hello world"
//   tok.free();
//
//   const bert = await Tokenizer.fromVocabData("all-MiniLM-L6-v2", tokenizerJsonBytes);
//   bert.encoding("Hello, world!").ids;   // Uint32Array [101, 7592, 1010, 2088, 999, 102]

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }) // keep a U+FEFF: it is text;

const MODE_ORDINARY = 0;
const MODE_ALLOW_ALL = 1;
const MODE_REFUSE = 2;

/** The core's error kinds, by the code ws_error_code gives. */
const ERROR_KINDS = {
  1: "FormatError",
  2: "DisallowedSpecialError",
  3: "UnknownIdError",
  4: "UnsupportedError",
  5: "WordsplitError",
};

/** An error of the wordsplit core: `kind` names it, `message` is the core's. */
export class WordsplitError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "WordsplitError";
    this.kind = kind;
  }
}

/** The bundled file each registered vocabulary name is read from (fromPretrained). */
export const VOCAB_FILES = {
  gpt2: "r50k_base.tiktoken",
  r50k_base: "r50k_base.tiktoken",
  p50k_base: "p50k_base.tiktoken",
  p50k_edit: "p50k_base.tiktoken",
  cl100k_base: "cl100k_base.tiktoken",
  o200k_base: "o200k_base.tiktoken",
  o200k_harmony: "o200k_base.tiktoken",
  qwen3: "qwen3.tiktoken",
};

let instancePromise = null;

async function readWasm(url) {
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/**
 * Instantiate the WebAssembly module once. `source` (optional) is the module's bytes, a
 * WebAssembly.Module (edge runtimes that forbid compiling at run time) or a URL; by default
 * wordsplit.wasm next to this file.
 */
export function init(source) {
  if (!instancePromise) {
    instancePromise = (async () => {
      let module = source;
      if (!(module instanceof WebAssembly.Module)) {
        const bytes =
          module instanceof ArrayBuffer || ArrayBuffer.isView(module)
            ? module
            : await readWasm(new URL(module ?? "./wordsplit.wasm", import.meta.url));
        module = await WebAssembly.compile(bytes);
      }
      const instance = await WebAssembly.instantiate(module, {});
      return instance.exports;
    })();
    instancePromise.catch(() => {
      instancePromise = null;
    });
  }
  return instancePromise;
}

/**
 * Strings up to this many UTF-16 code units are written into the module's memory as UTF-8
 * directly (TextEncoder.encodeInto, into room for 3 bytes per unit, the most one takes):
 * no copy in JavaScript. Longer ones are encoded first, so that the module's memory, which
 * never shrinks, grows by their UTF-8 length only.
 */
const ENCODE_INTO_MAX = 1 << 22;

/** A string (as UTF-8) or bytes in the module's memory, given back by free(). */
class Input {
  constructor(wasm, value) {
    this.wasm = wasm;
    const direct = typeof value === "string" && value.length <= ENCODE_INTO_MAX;
    const bytes = typeof value === "string" && !direct ? encoder.encode(value) : value;
    // `size` is what was allocated (and is given back), `len` what holds the input.
    this.size = direct ? 3 * value.length : bytes.length;
    this.ptr = wasm.ws_alloc(this.size);
    if (!this.size) {
      this.len = 0;
    } else if (direct) {
      // After ws_alloc: it may have grown the memory, which replaces memory.buffer.
      this.len = encoder.encodeInto(value, new Uint8Array(wasm.memory.buffer, this.ptr, this.size)).written;
    } else {
      this.len = bytes.length;
      new Uint8Array(wasm.memory.buffer, this.ptr, this.len).set(bytes);
    }
  }
  free() {
    this.wasm.ws_free(this.ptr, this.size);
  }
}

function withInputs(wasm, inputs, call) {
  const held = [];
  try {
    for (const bytes of inputs) held.push(new Input(wasm, bytes));
    return call(...held.map((input) => [input.ptr, input.len]).flat());
  } finally {
    for (const input of held) input.free();
  }
}

function resultBytes(wasm) {
  const ptr = wasm.ws_result_ptr();
  const len = wasm.ws_result_len();
  return new Uint8Array(wasm.memory.buffer, ptr, len).slice();
}

function resultText(wasm) {
  return decoder.decode(resultBytes(wasm));
}

function throwLast(wasm) {
  const kind = ERROR_KINDS[wasm.ws_error_code()] ?? "WordsplitError";
  throw new WordsplitError(kind, resultText(wasm));
}

/** `text`, checked to be a string (an Input writes it as UTF-8). */
function textInput(text) {
  if (typeof text !== "string") throw new TypeError(`expected a string, got ${typeof text}`);
  return text;
}

/** `token` (its text, or its bytes), checked to be a string or a Uint8Array. */
function tokenInput(token) {
  if (typeof token === "string" || token instanceof Uint8Array) return token;
  throw new TypeError("a token is a string or a Uint8Array of its bytes");
}

/** The encode mode and the allowed list of `{allowedSpecial, disallowedSpecial}`. */
function specialMode(options) {
  const allowed = options?.allowedSpecial;
  const disallowed = options?.disallowedSpecial;
  if (allowed === "all") return [MODE_ALLOW_ALL, ""];
  let list = [];
  if (allowed !== undefined && allowed !== null) {
    if (typeof allowed === "string" || typeof allowed[Symbol.iterator] !== "function") {
      throw new TypeError('allowedSpecial is "all" or a list of special tokens');
    }
    list = [...allowed];
  }
  if (disallowed !== undefined && disallowed !== "all" && !(Array.isArray(disallowed) && disallowed.length === 0)) {
    throw new TypeError('disallowedSpecial is "all" or []');
  }
  return [disallowed === "all" ? MODE_REFUSE : MODE_ORDINARY, list.join("\n")];
}

/** A vocabulary's tokenizer, in the WebAssembly module's memory until free(). */
export class Tokenizer {
  #wasm;
  #handle;
  #info;

  constructor(wasm, handle) {
    this.#wasm = wasm;
    this.#handle = handle;
    wasm.ws_info(handle);
    this.#info = JSON.parse(resultText(wasm));
  }

  /**
   * The tokenizer of a vocabulary file: `bytes` a tokenizer.json (HF), a SentencePiece
   * Unigram .model, or the rank file of the registered vocabulary `name` (a .tiktoken file: cl100k_base.tiktoken for
   * cl100k_base, qwen3.tiktoken for qwen3), which is checked against its official sha256.
   */
  static async fromVocabData(name, bytes, options = {}) {
    const wasm = await init(options.wasm);
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const handle = withInputs(wasm, [textInput(name), data], (np, nl, dp, dl) =>
      wasm.ws_tokenizer_new(np, nl, dp, dl),
    );
    if (!handle) throwLast(wasm);
    return new Tokenizer(wasm, handle);
  }

  /** The registered vocabulary `name`, its file fetched from `<baseUrl>/<file>` (VOCAB_FILES). */
  static async fromPretrained(name, { baseUrl, fetch: fetchFile = globalThis.fetch, wasm } = {}) {
    const file = VOCAB_FILES[name];
    if (!file) {
      throw new WordsplitError(
        "FormatError",
        `unknown vocabulary ${JSON.stringify(name)}: one of ${Object.keys(VOCAB_FILES).join(", ")}`,
      );
    }
    if (!baseUrl) throw new TypeError("fromPretrained needs {baseUrl}, where the vocabulary files are served");
    const url = `${String(baseUrl).replace(/\/$/, "")}/${file}`;
    const response = await fetchFile(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
    return Tokenizer.fromVocabData(name, new Uint8Array(await response.arrayBuffer()), { wasm });
  }

  #live() {
    if (!this.#handle) throw new Error("this Tokenizer was freed");
    return this.#handle;
  }

  /** The vocabulary's name. */
  get name() {
    return this.#info.name;
  }

  /** The model: "BPE" (byte-level), "WordPiece", "WordLevel", "Unigram" or "CharacterBpe" (HF's BPE over characters: CLIP's). */
  get model() {
    return this.#info.model;
  }

  /** The number of ids (one more than the largest). */
  get vocabSize() {
    return this.#info.nVocab;
  }

  /** The end-of-sequence token's id, or null. */
  get eosTokenId() {
    return this.#info.eosTokenId;
  }

  /**
   * The ids of `text`. Special-token text is plain text unless allowed:
   * `{allowedSpecial: "all"}` or a list of special tokens makes them ids;
   * `{disallowedSpecial: "all"}` throws on any that is not allowed (tiktoken's default).
   */
  encode(text, options) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const [mode, allowed] = specialMode(options);
    const status = withInputs(wasm, [textInput(text), allowed], (tp, tl, ap, al) =>
      wasm.ws_encode(handle, tp, tl, mode, ap, al),
    );
    if (status < 0) throwLast(wasm);
    return new Uint32Array(wasm.memory.buffer, wasm.ws_ids_ptr(), wasm.ws_ids_len()).slice();
  }

  /** encode() of each text. */
  encodeBatch(texts, options) {
    return Array.from(texts, (text) => this.encode(text, options));
  }

  /** The number of ids encode() gives (without copying them out). */
  count(text, options) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const [mode, allowed] = specialMode(options);
    if (allowed) return this.encode(text, options).length;
    const n = withInputs(wasm, [textInput(text)], (tp, tl) => wasm.ws_count(handle, tp, tl, mode));
    if (n < 0) throwLast(wasm);
    return n;
  }

  /**
   * The text of `ids` (an array or Uint32Array); invalid UTF-8 becomes U+FFFD. A word model's
   * tokens are joined by its decoder (WordPiece's: `##` pieces joined to the word before, the
   * rest after a space), as HF's decode; a Unigram model's as sentencepiece's or HF's decoder
   * (`▁` a space, the first one dropped). `{skipSpecialTokens: true}` leaves the special
   * tokens out.
   */
  decode(ids, options) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const array = ids instanceof Uint32Array ? ids : Uint32Array.from(ids);
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    const skip = options?.skipSpecialTokens ? 1 : 0;
    const status = withInputs(wasm, [bytes], (p, l) => wasm.ws_decode(handle, p, l / 4, skip));
    if (status < 0) throwLast(wasm);
    return resultText(wasm);
  }

  /** decode() of each list of ids. */
  decodeBatch(batch, options) {
    return Array.from(batch, (ids) => this.decode(ids, options));
  }

  /**
   * HF tokenizers' encode of `text` (and `{pair}`): every special token in the text is its
   * id, and with `{addSpecialTokens: true}` (the default) the file's post-processor adds its
   * tokens (BERT's [CLS] and [SEP]). Gives `{ids, typeIds, specialTokensMask, offsets}`:
   * Uint32Array, Uint32Array, Uint8Array, and per token `[start, end]` in code points of its
   * own text (HF's offsets; an added special token has `[0, 0]`).
   */
  encoding(text, options = {}) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const pair = options.pair;
    if (pair !== undefined && pair !== null) textInput(pair);
    const hasPair = pair === undefined || pair === null ? 0 : 1;
    const add = options.addSpecialTokens === false ? 0 : 1;
    const status = withInputs(wasm, [textInput(text), hasPair ? pair : ""], (tp, tl, pp, pl) =>
      wasm.ws_encoding(handle, tp, tl, pp, pl, hasPair, add),
    );
    if (status < 0) throwLast(wasm);
    const out = JSON.parse(resultText(wasm));
    return {
      ids: Uint32Array.from(out.ids),
      typeIds: Uint32Array.from(out.typeIds),
      specialTokensMask: Uint8Array.from(out.specialTokensMask),
      offsets: out.offsets,
    };
  }

  /** The id of a token (its text, or its bytes as a Uint8Array), or undefined. */
  tokenToId(token) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const id = withInputs(wasm, [tokenInput(token)], (p, l) => wasm.ws_token_to_id(handle, p, l));
    return id < 0 ? undefined : id;
  }

  /** The bytes of token `id` (a Uint8Array: a token can be part of a character), or undefined. */
  idToTokenBytes(id) {
    const handle = this.#live();
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) return undefined;
    return this.#wasm.ws_id_to_token(handle, id) ? resultBytes(this.#wasm) : undefined;
  }

  /** The text of token `id` (a partial character as U+FFFD), or undefined. */
  idToToken(id) {
    const bytes = this.idToTokenBytes(id);
    return bytes === undefined ? undefined : decoder.decode(bytes);
  }

  /** The special tokens: {text: id}. */
  getSpecialTokens() {
    this.#live();
    return { ...this.#info.specialTokens };
  }

  /** The added (non-special) tokens: {text: id}. */
  getAddedTokens() {
    this.#live();
    return { ...this.#info.addedTokens };
  }

  /**
   * How `text` is encoded: its pieces (`start`, `end` byte offsets in the text, `kind`
   * "special" / "added" / "bpe" / "wordpiece" / "word-level", `bytes`, `text`, `ids`,
   * `wholeTokenId`, `mergeIds`) and per BPE piece every merge pass (`symbols` as Uint8Arrays and `symbolText`, `candidates` with each
   * adjacent pair's merge `rank` and `mergedId`, and the `winner` merged). Options as
   * encode(). Quadratic in a piece's length: meant for short texts.
   */
  explain(text, options) {
    const handle = this.#live();
    const wasm = this.#wasm;
    const [mode, allowed] = specialMode(options);
    if (allowed) throw new TypeError('explain takes allowedSpecial "all" or none');
    const status = withInputs(wasm, [textInput(text)], (tp, tl) => wasm.ws_explain(handle, tp, tl, mode));
    if (status < 0) throwLast(wasm);
    const trace = JSON.parse(resultText(wasm));
    for (const piece of trace.pieces) {
      piece.bytes = fromHex(piece.bytes);
      piece.text = decoder.decode(piece.bytes);
      for (const pass of piece.passes) {
        pass.symbols = pass.symbols.map(fromHex);
        pass.symbolText = pass.symbols.map((s) => decoder.decode(s));
      }
    }
    return trace;
  }

  /** Give the tokenizer's memory back; the tokenizer cannot be used afterwards. */
  free() {
    if (this.#handle) {
      this.#wasm.ws_tokenizer_free(this.#handle);
      this.#handle = 0;
    }
  }
}

function fromHex(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(2 * i, 2), 16);
  return bytes;
}
