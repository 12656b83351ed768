"""Write tokenizer.json files of mistral-v7.model in the layouts transformers gives SentencePiece
BPE models, for the tokenizer.json tests: ``mistral-v7-`` + the layout + ``.tokenizer.json.gz`` in
tests/data/spm/.

Built with HF ``tokenizers``' own API, as transformers' ``LlamaConverter`` and
``GemmaConverter`` build them (transformers 4.x: the merges are every split of a piece into two
pieces, ordered by the piece's score, then by the ids of the two parts; control pieces are
special added tokens, user-defined pieces non-special ones, all ``normalized: false``):

* ``llama-legacy``: normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")``, no pre-tokenizer
  (Llama 2's own tokenizer.json);
* ``llama``: no normalizer, pre-tokenizer ``Metaspace(prepend_scheme="first", split=False)``
  (transformers' non-legacy conversion, Mistral's repos);
* ``gemma``: normalizer ``Replace(" ", "▁")`` only, no dummy prefix (Gemma's layout);

with the decoders ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and, for the Llama layouts,
``Strip(" ", 1, 0)``.

Run: python tools/gen_spm_tokenizer_json.py   (needs tokenizers and sentencepiece)
"""

from __future__ import annotations

import gzip
from pathlib import Path

from sentencepiece import sentencepiece_model_pb2
from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers  # noqa: F401
from tokenizers.models import BPE

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "tests" / "data" / "spm" / "mistral-v7.model"


def converted(layout: str) -> Tokenizer:
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(MODEL.read_bytes())
    vocab = {piece.piece: i for i, piece in enumerate(proto.pieces)}
    merges = []
    for piece, i in vocab.items():
        local = [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
        local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        merges += [(left, right, proto.pieces[i].score) for left, right in local]
    merges.sort(key=lambda merge: merge[2], reverse=True)  # (stable: ties keep the order above)
    tokenizer = Tokenizer(BPE(vocab, [(left, right) for left, right, _ in merges], unk_token="<unk>",
                              fuse_unk=True, byte_fallback=True))
    tokenizer.add_tokens([AddedToken(p.piece, normalized=False, special=p.type == 3)
                          for p in proto.pieces if p.type in (3, 4)])
    steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if layout == "llama-legacy":
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    elif layout == "llama":
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    else:
        tokenizer.normalizer = normalizers.Replace(" ", "▁")
    if layout != "gemma":
        steps.append(decoders.Strip(content=" ", left=1, right=0))
    tokenizer.decoder = decoders.Sequence(steps)
    return tokenizer


def main() -> None:
    for layout in ("llama-legacy", "llama", "gemma"):
        out = MODEL.with_name(f"mistral-v7-{layout}.tokenizer.json.gz")
        out.write_bytes(gzip.compress(converted(layout).to_str().encode("utf-8"), mtime=0))
        print(out.relative_to(ROOT))


if __name__ == "__main__":
    main()
