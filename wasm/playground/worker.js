// The playground's tokenizers run here, off the page's thread: a megabyte of text keeps the
// page responsive. Messages in: {id, op: "load", key, name, url | bytes} and
// {id, op: "tokenize", key, text} and {id, op: "explain", key, start, end}; out: {id, ok, ...}.
// A model whose tokens do not spell the text (WordPiece's ## pieces and lowercased words,
// Unigram's ▁ and byte pieces, CLIP's </w>) places its tokens by their offsets; where the
// core gives none, each token is placed over the whole text.
import { Tokenizer } from "./wordsplit.js";

const tokenizers = new Map(); // key -> {tok, specialIds, tokenBytes: Map<id, Uint8Array>}
const lastText = new Map(); // key -> {bytes, ids, ends}
const encoder = new TextEncoder();

async function load({ key, name, url, bytes }) {
  if (tokenizers.has(key)) return describe(key);
  let data = bytes;
  if (!data) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
    data = new Uint8Array(await response.arrayBuffer());
  }
  const tok = await Tokenizer.fromVocabData(name, data);
  const special = tok.getSpecialTokens();
  tokenizers.set(key, { tok, specialIds: new Set(Object.values(special)), tokenBytes: new Map() });
  return describe(key);
}

function describe(key) {
  const { tok } = tokenizers.get(key);
  return { name: tok.name, model: tok.model, vocabSize: tok.vocabSize, specialTokens: tok.getSpecialTokens() };
}

/** The UTF-8 offset of each code point of `text`, and of its end. */
function codePointBytes(text) {
  const out = [0];
  let at = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    at += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    out.push(at);
  }
  return out;
}

function tokenize({ key, text }) {
  const entry = tokenizers.get(key);
  const placed = ["WordPiece", "WordLevel", "Unigram", "CharacterBpe"].includes(entry.tok.model);
  const started = performance.now();
  // HF's encode (its offsets, in code points), without the added [CLS]/[SEP] or </s>.
  let encoding = null;
  if (placed) {
    try {
      encoding = entry.tok.encoding(text, { addSpecialTokens: false });
    } catch {
      encoding = null; // (no offsets for this model: its tokens span the whole text)
    }
  }
  const word = encoding !== null;
  const ids = word ? encoding.ids : entry.tok.encode(text, { allowedSpecial: "all" });
  const ms = performance.now() - started;
  // Each token's bytes (cached per id) and where it starts and ends in the text's UTF-8.
  const starts = new Uint32Array(ids.length);
  const ends = new Uint32Array(ids.length);
  const special = new Uint8Array(ids.length);
  const pieces = [];
  const byteOf = word ? codePointBytes(text) : null;
  const bytes = encoder.encode(text);
  const byteLength = bytes.length;
  let end = 0;
  for (let i = 0; i < ids.length; i++) {
    let bytes = entry.tokenBytes.get(ids[i]);
    if (!bytes) {
      bytes = entry.tok.idToTokenBytes(ids[i]);
      entry.tokenBytes.set(ids[i], bytes);
    }
    if (word) {
      starts[i] = byteOf[encoding.offsets[i][0]];
      ends[i] = byteOf[encoding.offsets[i][1]];
    } else if (placed) {
      starts[i] = 0;
      ends[i] = byteLength;
    } else {
      starts[i] = end;
      end += bytes.length;
      ends[i] = end;
    }
    special[i] = entry.specialIds.has(ids[i]) ? 1 : 0;
    if (i < 20000) pieces.push(bytes);
  }
  lastText.set(key, { bytes, ids });
  // What the model's decoder makes of the ids (byte-level BPE gives the text back).
  const decoded = placed ? entry.tok.decode(ids.subarray(0, 20000)) : null;
  return { ids, starts, ends, special, pieces, byteLength: bytes.length, ms, decoded };
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The trace of the piece holding bytes [start, end) of the last text: explain runs on a
 *  window around it (a whole text can be megabytes), and the trace is given only when the
 *  window's piece has the ids the whole text's encode gave there. */
function explainAt({ key, start, end, tokenIndex, tokenCount }) {
  const entry = tokenizers.get(key);
  const { bytes, ids } = lastText.get(key);
  let from = Math.max(0, start - 2048);
  let to = Math.min(bytes.length, end + 2048);
  while (from > 0 && (bytes[from] & 0xc0) === 0x80) from--;
  while (to < bytes.length && (bytes[to] & 0xc0) === 0x80) to++;
  const trace = entry.tok.explain(decoder.decode(bytes.subarray(from, to)), { allowedSpecial: "all" });
  const piece = trace.pieces.find((p) => from + p.start <= start && end <= from + p.end);
  if (!piece) return { piece: null };
  const want = Array.from(ids.subarray(tokenIndex, tokenIndex + tokenCount));
  const ok = want.every((id) => piece.ids.includes(id));
  return { piece: ok ? piece : null, rankBase: trace.rankBase };
}

self.onmessage = async ({ data }) => {
  try {
    let result;
    if (data.op === "load") result = await load(data);
    else if (data.op === "tokenize") result = tokenize(data);
    else if (data.op === "explain") result = explainAt(data);
    else throw new Error(`unknown op ${data.op}`);
    self.postMessage({ id: data.id, ok: true, result });
  } catch (error) {
    self.postMessage({ id: data.id, ok: false, error: String(error.message ?? error), kind: error.kind });
  }
};
