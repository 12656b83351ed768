// The playground page: a text box, one column per vocabulary, tokens as chips. The
// tokenizers run in worker.js; this file only renders what the worker answers.
import { VOCAB_FILES } from "./wordsplit.js";

const BUNDLED = Object.keys(VOCAB_FILES);
const DEFAULT_VOCABS = ["cl100k_base", "o200k_base", "qwen3"];
const MAX_CHIPS = 3000; // chips drawn per column; counts always cover the whole text
const MAX_LINK_TEXT = 4000; // longer text is left out of the page's link

const $ = (id) => document.getElementById(id);
const textBox = $("text");
const columnsEl = $("columns");
const tip = $("tip");
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

// -- the worker, called like a function ---------------------------------------------------
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const pending = new Map();
let nextId = 1;
worker.onmessage = ({ data }) => {
  const { resolve, reject } = pending.get(data.id);
  pending.delete(data.id);
  if (data.ok) resolve(data.result);
  else reject(Object.assign(new Error(data.error), { kind: data.kind }));
};
function call(message, transfer = []) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ ...message, id }, transfer);
  });
}

// -- vocabularies -------------------------------------------------------------------------
const columns = new Map(); // key -> {key, name, source, el, loaded}
const params = new URLSearchParams(location.search);
const chosen = new Set((params.get("vocab") ?? DEFAULT_VOCABS.join(",")).split(",").filter((v) => BUNDLED.includes(v)));
if (params.has("text")) textBox.value = params.get("text");

for (const name of BUNDLED) {
  const label = document.createElement("label");
  const box = Object.assign(document.createElement("input"), { type: "checkbox", checked: chosen.has(name), value: name });
  box.addEventListener("change", () => {
    if (box.checked) chosen.add(name);
    else chosen.delete(name);
    syncColumns();
  });
  label.append(box, " " + name);
  $("vocabs").append(label);
}

function addColumn(key, name, source) {
  const el = document.createElement("section");
  el.className = "column";
  el.dataset.vocab = name;
  el.innerHTML =
    '<h2></h2><div class="counts"></div><div class="tokens"></div><div class="decoded" hidden></div><pre class="ids" hidden></pre>';
  el.querySelector("h2").textContent = name;
  columnsEl.append(el);
  const column = { key, name, source, el, loaded: null };
  columns.set(key, column);
  return column;
}

function syncColumns() {
  for (const [key, column] of columns) {
    if (key.startsWith("bundled:") && !chosen.has(column.name)) {
      column.el.remove();
      columns.delete(key);
    }
  }
  for (const name of BUNDLED) {
    if (chosen.has(name) && !columns.has(`bundled:${name}`)) {
      addColumn(`bundled:${name}`, name, { url: new URL(`vocabs/${VOCAB_FILES[name]}`, location.href).href });
    }
  }
  update();
}

// A dropped file: a tokenizer.json (byte-level BPE, a BERT-style WordPiece or WordLevel one,
// or a Unigram one), a SentencePiece Unigram .model (T5's spiece.model), or the .tiktoken rank
// file of a registered name (its file name says which: cl100k_base.tiktoken).
document.addEventListener("dragover", (e) => {
  e.preventDefault();
  $("drop").classList.add("over");
});
document.addEventListener("dragleave", () => $("drop").classList.remove("over"));
document.addEventListener("drop", async (e) => {
  e.preventDefault();
  $("drop").classList.remove("over");
  for (const file of e.dataTransfer.files) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const stem = file.name.replace(/\.(tiktoken|json|model)$/, "").replace(/^(.*)\.tokenizer$/, "$1");
    const registered = Object.entries(VOCAB_FILES).find(([, f]) => f === file.name)?.[0];
    addColumn(`file:${file.name}:${nextId++}`, registered ?? stem, { bytes });
  }
  update();
});

// -- tokenizing ---------------------------------------------------------------------------
let generation = 0;
let timer = 0;
textBox.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(update, 120);
});

async function update() {
  const run = ++generation;
  const text = textBox.value;
  document.body.dataset.state = "busy";
  updateLink(text);
  const started = performance.now();
  await Promise.all([...columns.values()].map((column) => tokenizeColumn(column, text, run)));
  if (run !== generation) return;
  $("status").textContent = `${(performance.now() - started).toFixed(0)} ms`;
  document.body.dataset.state = "done";
}

async function tokenizeColumn(column, text, run) {
  const counts = column.el.querySelector(".counts");
  try {
    column.loaded ??= call({ op: "load", key: column.key, name: column.name, ...column.source });
    await column.loaded;
    if (run !== generation) return;
    counts.textContent = "tokenizing…";
    const result = await call({ op: "tokenize", key: column.key, text });
    if (run !== generation) return;
    render(column, text, result);
  } catch (error) {
    if (column.source.bytes) column.loaded = null;
    counts.innerHTML = "";
    const message = document.createElement("span");
    message.className = "error";
    message.textContent = `${error.kind ?? "Error"}: ${error.message}`;
    counts.append(message);
    column.el.querySelector(".tokens").replaceChildren();
    column.el.dataset.tokens = "error";
  }
}

function setCount(counts, label, value, name) {
  const b = document.createElement("b");
  b.textContent = value;
  b.dataset.count = name;
  counts.append(b, ` ${label}  `);
}

function render(column, text, { ids, starts, ends, special, pieces, byteLength, ms, decoded }) {
  const { el } = column;
  const counts = el.querySelector(".counts");
  counts.replaceChildren();
  let chars = 0;
  for (const _ of text) chars++;
  setCount(counts, "tokens", ids.length, "tokens");
  setCount(counts, "characters", chars, "characters");
  setCount(counts, "bytes", byteLength, "bytes");
  setCount(counts, "bytes/token", ids.length ? (byteLength / ids.length).toFixed(2) : "–", "bytesPerToken");
  counts.append(`(${ms.toFixed(1)} ms)`);
  el.dataset.tokens = String(ids.length);

  const shown = Math.min(ids.length, MAX_CHIPS, pieces.length);
  const fragment = document.createDocumentFragment();
  let group = 0;
  for (let i = 0; i < shown; ) {
    // A chip is one token, or the tokens that share a character's bytes.
    let j = i + 1;
    while (j < shown && pieces[j].length && (pieces[j][0] & 0xc0) === 0x80) j++;
    const chip = document.createElement("span");
    chip.className = `chip c${group++ % 6}` + (j - i > 1 ? " split" : "") + (special[i] ? " special" : "");
    chip.dataset.i = i;
    chip.dataset.n = j - i;
    const bytes = concat(pieces.slice(i, j));
    appendVisible(chip, decoder.decode(bytes));
    const sub = document.createElement("sub");
    sub.textContent = Array.from(ids.subarray(i, j)).join("+");
    chip.append(sub);
    fragment.append(chip);
    i = j;
  }
  if (shown < ids.length) {
    const more = document.createElement("div");
    more.className = "more";
    more.textContent = `… ${ids.length - shown} more tokens (the counts above cover all of them)`;
    fragment.append(more);
  }
  el.querySelector(".tokens").replaceChildren(fragment);
  const idsEl = el.querySelector(".ids");
  idsEl.textContent = Array.from(ids.subarray(0, shown)).join(" ");
  // A word model's decode (WordPiece joins ## pieces): the text its tokens stand for.
  const decodedEl = el.querySelector(".decoded");
  decodedEl.hidden = decoded === null;
  decodedEl.textContent = decoded === null ? "" : `decoded: ${decoded}`;
  column.last = { ids, starts, ends, pieces, word: decoded !== null };
}

function concat(arrays) {
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

// Whitespace and invisible characters, drawn: space ·, tab →, newline ↵ (then a real line
// break), other controls as their Control Pictures, zero-width and format characters by name.
const INVISIBLE = /[\u0000-\u0020\u007f\u00a0\u00ad\u200b-\u200f\u2028\u2029\u2060\ufeff]/gu;
function appendVisible(parent, text) {
  let last = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    if (match.index > last) parent.append(text.slice(last, match.index));
    const ch = match[0];
    const code = ch.codePointAt(0);
    const ws = document.createElement("span");
    ws.className = "ws";
    ws.textContent =
      ch === " " ? "·" : ch === "\t" ? "→" : ch === "\n" ? "↵\n" : ch === "\r" ? "␍"
      : code < 0x20 ? String.fromCodePoint(0x2400 + code) : code === 0x7f ? "␡"
      : `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
    parent.append(ws);
    last = match.index + ch.length;
  }
  if (last < text.length) parent.append(text.slice(last));
}

// -- hover: id, bytes, merge trace ----------------------------------------------------------
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");

columnsEl.addEventListener("mouseover", async (e) => {
  const chip = e.target.closest(".chip");
  if (!chip || chip === lastHovered) return;
  lastHovered = chip;
  const column = [...columns.values()].find((c) => c.el.contains(chip));
  const { ids, starts, ends, pieces, word } = column.last;
  const i = Number(chip.dataset.i);
  const n = Number(chip.dataset.n);
  const rect = chip.getBoundingClientRect();
  tip.style.left = `${Math.min(rect.left, innerWidth - 540)}px`;
  tip.style.top = `${rect.bottom + 4}px`;
  tip.style.display = "block";
  tip.replaceChildren();
  for (let k = i; k < i + n; k++) {
    const line = document.createElement("div");
    line.textContent = `id ${ids[k]}  bytes ${hex(pieces[k])}  ${JSON.stringify(decoder.decode(pieces[k]))}`;
    tip.append(line);
  }
  const start = starts[i];
  if (word) {
    // A word model's token stands for this part of the text (its offsets).
    const source = decoder.decode(new TextEncoder().encode(textBox.value).subarray(start, ends[i + n - 1]));
    const line = document.createElement("div");
    line.textContent = `text ${JSON.stringify(source)} (bytes ${start}–${ends[i + n - 1]})`;
    tip.append(line);
  }
  try {
    const { piece } = await call({ op: "explain", key: column.key, start, end: ends[i + n - 1], tokenIndex: i, tokenCount: n });
    if (chip !== lastHovered) return; // the pointer moved on
    tip.append(traceTable(piece));
  } catch (error) {
    tip.append(`(no trace: ${error.message})`);
  }
});
let lastHovered = null;
columnsEl.addEventListener("mouseleave", () => {
  tip.style.display = "none";
  lastHovered = null;
});

function traceTable(piece) {
  const box = document.createElement("div");
  if (!piece) {
    box.textContent = "(this token's piece has no trace here: its text is normalized or very long)";
    return box;
  }
  const head = document.createElement("div");
  head.textContent = `piece ${JSON.stringify(piece.text)} (${piece.kind})` +
    (piece.wholeTokenId !== null ? `: a whole token, one lookup → ${piece.wholeTokenId}` : "") +
    (piece.kind === "wordpiece" ? ": the longest tokens from the left, ## after the first" : "") +
    (piece.kind === "word-level" ? ": the word looked up whole" : "");
  box.append(head);
  if (piece.kind === "wordpiece" || piece.kind === "word-level") {
    const ids = document.createElement("div");
    ids.textContent = `ids ${piece.ids.join(" ")}`;
    box.append(ids);
    return box;
  }
  if (piece.passes.length > 200) {
    box.append(`${piece.passes.length} merge passes (too many to show)`);
    return box;
  }
  const table = document.createElement("table");
  piece.passes.forEach((pass, k) => {
    const row = table.insertRow();
    row.insertCell().textContent = `${k + 1}`;
    const symbols = row.insertCell();
    pass.symbolText.forEach((s, j) => {
      const span = document.createElement("span");
      span.textContent = JSON.stringify(s).slice(1, -1) + " ";
      if (pass.winner !== null && (j === pass.winner || j === pass.winner + 1)) span.className = "win";
      symbols.append(span);
    });
    const best = pass.winner === null ? null : pass.candidates[pass.winner];
    row.insertCell().textContent = best ? `merge rank ${best.rank} → ${best.mergedId}` : "no pair merges";
  });
  box.append(table);
  const ids = document.createElement("div");
  ids.textContent = `ids ${piece.ids.join(" ")}`;
  box.append(ids);
  return box;
}

// -- links --------------------------------------------------------------------------------
function linkFor(text) {
  const query = new URLSearchParams();
  if (text.length <= MAX_LINK_TEXT) query.set("text", text);
  query.set("vocab", [...chosen].join(","));
  return `${location.pathname}?${query}`;
}
function updateLink(text) {
  history.replaceState(null, "", linkFor(text));
}
$("share").addEventListener("click", async () => {
  const url = new URL(linkFor(textBox.value), location.href).href;
  try {
    await navigator.clipboard.writeText(url);
    $("status").textContent = "link copied";
  } catch {
    prompt("the link to this text and these vocabularies:", url);
  }
});

syncColumns();
