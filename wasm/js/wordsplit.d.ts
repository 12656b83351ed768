// Types of wordsplit.js: exact token ids of byte-level BPE vocabularies, of HF's WordPiece,
// WordLevel, Unigram and BPE-over-characters (CLIP's) tokenizer.json files and of SentencePiece Unigram .model files, from
// the wordsplit core (WebAssembly).

/** An error of the wordsplit core; `kind` names it and `message` is the core's. */
export class WordsplitError extends Error {
  kind: "FormatError" | "DisallowedSpecialError" | "UnknownIdError" | "UnsupportedError" | "WordsplitError";
}

/** The file each registered vocabulary name is read from by `fromPretrained`. */
export const VOCAB_FILES: Readonly<Record<string, string>>;

/** Instantiate the WebAssembly module once (by default wordsplit.wasm next to wordsplit.js). */
export function init(source?: BufferSource | WebAssembly.Module | string | URL): Promise<WebAssembly.Exports>;

export interface EncodeOptions {
  /** "all", or the special tokens whose text becomes their id (otherwise it is plain text). */
  allowedSpecial?: "all" | Iterable<string>;
  /** "all": special-token text that is not allowed throws (tiktoken's default). */
  disallowedSpecial?: "all" | [];
}

export interface MergeCandidate {
  /** The merge rank of the pair (lower merges first), or null if it never merges. */
  rank: number | null;
  mergedId: number | null;
}

export interface MergePass {
  symbols: Uint8Array[];
  symbolText: string[];
  /** candidates[k] is the pair of symbols k and k + 1. */
  candidates: MergeCandidate[];
  /** The pair merged in this pass; null in the last pass. */
  winner: number | null;
}

export interface PieceTrace {
  /** Byte offsets of the piece in the text's UTF-8. */
  start: number;
  end: number;
  kind: "special" | "added" | "bpe" | "wordpiece" | "word-level";
  bytes: Uint8Array;
  text: string;
  wholeTokenId: number | null;
  passes: MergePass[];
  mergeIds: number[];
  ids: number[];
}

export interface Explanation {
  ids: number[];
  /** What a merged id minus gives its merge rank (rank-based vocabularies), else null. */
  rankBase: number | null;
  pieces: PieceTrace[];
}

export interface Encoding {
  ids: Uint32Array;
  /** Which text of a pair each token belongs to, as the post-processor numbers them. */
  typeIds: Uint32Array;
  /** 1 for a special token the post-processor added. */
  specialTokensMask: Uint8Array;
  /** Per token, [start, end] in code points of its own text (HF's offsets); [0, 0] for an added special token. */
  offsets: [number, number][];
}

export class Tokenizer {
  /** A tokenizer.json's bytes (byte-level BPE, WordPiece, WordLevel, Unigram or HF's BPE over characters), a SentencePiece Unigram .model's, or the rank file of the registered vocabulary `name`. */
  static fromVocabData(name: string, bytes: BufferSource, options?: { wasm?: BufferSource | WebAssembly.Module | string | URL }): Promise<Tokenizer>;
  /** The registered vocabulary `name`, fetched from `<baseUrl>/<VOCAB_FILES[name]>`. */
  static fromPretrained(
    name: string,
    options: { baseUrl: string | URL; fetch?: typeof fetch; wasm?: BufferSource | WebAssembly.Module | string | URL },
  ): Promise<Tokenizer>;
  readonly name: string;
  /** "BPE" (byte-level), "WordPiece", "WordLevel", "Unigram" or "CharacterBpe" (HF's BPE over characters: CLIP). */
  readonly model: "BPE" | "WordPiece" | "WordLevel" | "Unigram" | "CharacterBpe";
  readonly vocabSize: number;
  readonly eosTokenId: number | null;
  encode(text: string, options?: EncodeOptions): Uint32Array;
  encodeBatch(texts: Iterable<string>, options?: EncodeOptions): Uint32Array[];
  count(text: string, options?: EncodeOptions): number;
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  decodeBatch(batch: Iterable<ArrayLike<number>>, options?: { skipSpecialTokens?: boolean }): string[];
  /** HF tokenizers' encode: special tokens in the text matched, the post-processor's added (addSpecialTokens, default true). */
  encoding(text: string, options?: { pair?: string; addSpecialTokens?: boolean }): Encoding;
  tokenToId(token: string | Uint8Array): number | undefined;
  idToToken(id: number): string | undefined;
  idToTokenBytes(id: number): Uint8Array | undefined;
  getSpecialTokens(): Record<string, number>;
  getAddedTokens(): Record<string, number>;
  explain(text: string, options?: { allowedSpecial?: "all"; disallowedSpecial?: "all" | [] }): Explanation;
  free(): void;
}
