"""Dataset-scale tokenization: many Parquet/JSONL/text files → shards in the format a trainer reads.

:func:`encode_dataset` (and ``wordsplit encode-dataset``) reads inputs (:mod:`.inputs`), encodes
each input's documents on native threads (``engine="local"``) or on a Ray cluster
(``engine="ray"``, :mod:`.ray_engine`), and writes shards in Megatron, nanoGPT, llm.c,
datatrove or .npy layout (:mod:`.formats`) with ``manifest.json`` (:mod:`.run`). The output is
deterministic (the same bytes whatever the number of threads or workers) and resumable.

>>> sorted(FORMATS)
['datatrove', 'llmc', 'megatron', 'nanogpt', 'npy']
"""

from .formats import FORMATS
from .inputs import DatasetInputError, expand_inputs, read_batches
from .run import MANIFEST, DatasetSummary, Progress, encode_dataset

__all__ = ["FORMATS", "MANIFEST", "DatasetInputError", "DatasetSummary", "Progress", "encode_dataset",
           "expand_inputs", "read_batches"]
