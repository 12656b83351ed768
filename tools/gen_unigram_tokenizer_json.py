"""Write tokenizer.json files made from the SentencePiece models of tests/data/unigram/ by
transformers' slow-to-fast converters (``transformers.convert_slow_tokenizer``), for the tests
of the tokenizer.json forms of Unigram models: ``<stem>.<converter>.tokenizer.json.gz`` in
tests/data/unigram/.

Each model goes through the converter that fits it (``CONVERSIONS`` below): ``T5Converter``
(T5 and mT5, 100 ``<extra_id_N>`` pieces appended), ``XLMRobertaConverter`` (fairseq's id
shift and ``<mask>``), ``AlbertConverter`` (lowercase, accents stripped, ``[CLS]``/``[SEP]``
template), ``LlamaConverter`` (the converter with byte fallback; it keeps no character map) and
the base ``SpmConverter`` where transformers has no model-specific converter (Marian's
``source.spm``, maxtext's model, sentencepiece's Japanese test model). A converter reads a
handful of attributes of the slow tokenizer it converts; ``StandInTokenizer`` gives them with
the slow tokenizers' defaults (as transformers' own converter tests do with their
``FakeOriginalTokenizer``), its ids being those of the converted vocabulary. A model no
converter reads (a SentencePiece BPE model without byte fallback) is read by the tokenizer class
that loads such files (``NllbTokenizer``), whose ``backend_tokenizer`` is written.

Made with transformers 5.23.0 and tokenizers 0.23.3; another version may write other files.

Run: python tools/gen_unigram_tokenizer_json.py   (needs transformers, tokenizers, sentencepiece, protobuf)
"""

from __future__ import annotations

import gzip
import tempfile
import warnings
from pathlib import Path

import transformers
from sentencepiece import sentencepiece_model_pb2
import transformers.convert_slow_tokenizer as converters

ROOT = Path(__file__).resolve().parent.parent
UNIGRAM = ROOT / "tests" / "data" / "unigram"

# (model file under tests/data/unigram, output stem, converter, slow-tokenizer attributes)
CONVERSIONS = [
    ("test_sentencepiece.model.gz", "test_sentencepiece", "T5Converter", {"_extra_ids": 100}),
    ("test_sentencepiece.model.gz", "test_sentencepiece", "XLMRobertaConverter", {}),
    ("test_sentencepiece_no_bos.model.gz", "test_sentencepiece_no_bos", "T5Converter", {"_extra_ids": 100}),
    ("spiece.model.gz", "spiece", "AlbertConverter", {"do_lower_case": True, "keep_accents": False}),
    ("test_sentencepiece_with_bytefallback.model.gz", "test_sentencepiece_with_bytefallback", "LlamaConverter",
     {"legacy": True}),
    ("maxtext-tokenizer.model.gz", "maxtext-tokenizer", "SpmConverter", {}),
    ("opus-mt-en-mg/source.spm.gz", "opus-mt-en-mg-source", "SpmConverter", {}),
    ("sentencepiece-test_ja_model.model.gz", "sentencepiece-test_ja_model", "SpmConverter", {}),
    # A SentencePiece BPE model without byte fallback: transformers' converters break on it
    # (SpmConverter passes its scores as the model type), so the tokenizer class that reads it
    # writes the file: a BPE model with the unknown piece and fuse_unk, NLLB's normalized <mask>.
    ("test_sentencepiece_bpe.model.gz", "test_sentencepiece_bpe", "NllbTokenizer", {}),
]


class StandInTokenizer:
    """The attributes of a slow tokenizer that the converters read; ids are the converted ones."""

    def __init__(self, vocab_file: str, proto, **attributes):
        self.vocab_file = vocab_file
        self.add_prefix_space = True
        self._pieces = [piece.piece for piece in proto.pieces]
        self._ids: dict[str, int] = {}
        for name, value in attributes.items():
            setattr(self, name, value)

    def use_vocab(self, vocab: list[tuple[str, float]]) -> None:
        self._ids = {piece: i for i, (piece, _) in reversed(list(enumerate(vocab)))}

    def convert_tokens_to_ids(self, token: str) -> int:
        return self._ids[token]

    def convert_ids_to_tokens(self, index: int) -> str:
        return self._pieces[index]


def converted(model: Path, converter_name: str, attributes: dict) -> str:
    data = gzip.decompress(model.read_bytes())
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    with tempfile.NamedTemporaryFile(suffix=".model") as file:
        file.write(data)
        file.flush()
        stand_in = StandInTokenizer(file.name, proto, **attributes)
        converter_class = getattr(converters, converter_name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the byte-fallback notice of the base converter
            converter = converter_class(stand_in)
        stand_in.use_vocab(converter.vocab(converter.proto))
        return converter.converted().to_str(pretty=True)


def from_tokenizer_class(model: Path, class_name: str, attributes: dict) -> str:
    """The tokenizer.json a transformers tokenizer class makes of a SentencePiece model given as
    its vocabulary file (``sentencepiece.bpe.model`` for NLLB), with ``attributes`` as
    ``from_pretrained``'s keyword arguments."""
    tokenizer_class = getattr(transformers, class_name)
    with tempfile.TemporaryDirectory() as folder:
        vocab_file = Path(folder) / tokenizer_class.vocab_files_names["vocab_file"]
        vocab_file.write_bytes(gzip.decompress(model.read_bytes()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tokenizer = tokenizer_class.from_pretrained(folder, **attributes)
        return tokenizer.backend_tokenizer.to_str(pretty=True)


def main() -> None:
    print("transformers", transformers.__version__)
    for source, stem, converter_name, attributes in CONVERSIONS:
        short = converter_name.removesuffix("Converter").removesuffix("Tokenizer").lower()
        out = UNIGRAM / f"{stem}.{short}.tokenizer.json.gz"
        if converter_name.endswith("Converter"):
            text = converted(UNIGRAM / source, converter_name, attributes)
        else:
            text = from_tokenizer_class(UNIGRAM / source, converter_name, attributes)
        out.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
        print(out.relative_to(ROOT))


if __name__ == "__main__":
    main()
