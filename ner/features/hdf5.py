"""The HDF5 layout of all biLM layers of a tokenized text file (``ner-embed``).

AllenNLP's former `elmo` command and bilm-tf's `dump_bilm_embeddings` write it: one float32
dataset per input line, key `str(i)`, shape (L+1, T_i, 2P) with BOS/EOS removed, plus a
`sentence_to_index` dataset holding a JSON object {sentence: key}. The input is streamed in
chunks of lines, so outputs are never all in memory; the file is written under a temporary name
and renamed when complete.
"""

import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import torch
from tqdm import tqdm

from ner.bilm.bilm import DEFAULT_STATE, MAX_TOKENS, BiLM
from ner.bilm.source import BiLMFolder
from ner.common.errors import InputError, MissingFileError
from ner.common.files import atomic_path, open_input
from ner.data.lines import decode_line

MAX_CACHED_TOKENS = 500_000


def read_sentences(path: Path) -> Iterator[list[str]]:
    """Whitespace-tokenized sentences, one per line, decoded strictly (errors name the line)."""
    with open_input(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield decode_line(raw, number, "utf-8").split()
            except UnicodeDecodeError as error:
                raise InputError(f"{path}:{number}: not valid UTF-8 ({error})") from error


def count_lines(path: Path) -> int:
    """Number of lines (a last line without newline counts)."""
    lines, last = 0, b"\n"
    with open_input(path) as handle:
        while block := handle.read(1 << 20):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def embed_file(
    bilm: BiLM,
    input_file: Path,
    output_file: Path,
    batch_size: int = 64,
    max_tokens: int = MAX_TOKENS,
    chunk_lines: int = 8192,
    progress: bool = True,
) -> int:
    """Write all layers of every line of `input_file` to `output_file`; returns the line count."""
    if bilm.state == "stateful":  # keep batches = consecutive lines across chunk boundaries
        chunk_lines = max(batch_size, chunk_lines // batch_size * batch_size)
    sentence_to_index: dict[str, str] = {}
    cache: dict[str, torch.Tensor] = {}
    lines = iter(read_sentences(input_file))
    written = 0
    with (
        atomic_path(output_file) as partial,
        h5py.File(partial, "w") as out,
        tqdm(total=count_lines(input_file), unit="line", disable=not progress) as bar,
    ):
        while chunk := list(islice(lines, chunk_lines)):
            if len(cache) > MAX_CACHED_TOKENS:
                cache.clear()
            embedded = bilm.embed_sentences(chunk, batch_size, max_tokens, token_cache=cache)
            for tokens, layers in zip(chunk, embedded, strict=True):
                key = str(written)
                out.create_dataset(key, data=layers.cpu().numpy().astype(np.float32))
                sentence_to_index[" ".join(tokens)] = key
                written += 1
            bar.update(len(chunk))
        index = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        index[0] = json.dumps(sentence_to_index)
    return written


def embed_with_files(
    input_file: Path,
    output_file: Path,
    *,
    model: str | Path | None = None,
    options_file: str | None = None,
    weight_file: str | None = None,
    state: str = DEFAULT_STATE,
    device: str = "cpu",
    **options: Any,
) -> int:
    """`embed_file` with the biLM of `model` (a folder in any format `load_bilm` reads, or a zip
    of one: a path or URL) or of `options_file` and `weight_file` (paths or URLs), loaded only
    once the input is known to exist; `options` go to `embed_file`."""
    if not Path(input_file).is_file():
        raise MissingFileError(f"input file not found: {input_file}")
    if model is not None:
        bilm = BiLMFolder(str(model), state=state).load()
    else:
        assert options_file is not None and weight_file is not None
        bilm = BiLM.from_files(options_file, weight_file, state=state)
    return embed_file(bilm.to(device).eval(), input_file, output_file, **options)
