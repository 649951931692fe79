"""The inputs of a corpus run: the files, folders and glob patterns the user named, each file
with the output it gives under the output folder, and a reader that decompresses on the fly.

A folder counts its files from itself (``in/sub/b.txt.gz`` given ``in/`` writes
``DIR/sub/b.jsonl``); a file named or matched by a pattern counts from its own folder
(``DIR/b.jsonl``). The compression suffix is dropped and the extension becomes the output
format's. Hidden files and folders, and the output folder itself, are not inputs.
"""

import bz2
import glob
import gzip
import lzma
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ner.common.errors import InputError

DECOMPRESSORS: dict[str, Callable[[IO[bytes]], IO[bytes]]] = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    ".bz2": bz2.BZ2File,
    ".xz": lzma.LZMAFile,
}
OUTPUT_SUFFIXES = {"jsonl": ".jsonl", "conll": ".conll", "doccano": ".jsonl"}
# What reading a damaged or vanished input raises (a truncated gzip stream: EOFError).
READ_ERRORS = (OSError, EOFError, lzma.LZMAError)


@dataclass(frozen=True)
class CorpusInput:
    """An input file and its output's path under the output folder (POSIX, relative)."""

    path: Path
    output: str


def output_name(relative: PurePosixPath, output_format: str) -> str:
    """`relative` without its compression suffix, with the output format's extension."""
    name = relative.name
    if relative.suffix in DECOMPRESSORS:
        name = name.removesuffix(relative.suffix)
    base = PurePosixPath(name)
    stem = base.stem if base.suffix else name
    return str(relative.parent / (stem + OUTPUT_SUFFIXES[output_format]))


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def _folder_files(folder: Path, skip: Path) -> Iterator[tuple[Path, PurePosixPath]]:
    """(file, path relative to `folder`) of every visible file under `folder`, sorted, the
    folder `skip` (the output folder) left out."""
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        inside_output = path.resolve().is_relative_to(skip)
        if path.is_file() and not _hidden(relative) and not inside_output:
            yield path, PurePosixPath(relative.as_posix())


def _named(name: str, skip: Path) -> Iterator[tuple[Path, PurePosixPath]]:
    """The files that the argument `name` stands for, each with its relative output base."""
    path = Path(name)
    if path.is_dir():
        yield from _folder_files(path, skip)
    elif path.exists() or not glob.has_magic(name):
        yield path, PurePosixPath(path.name)  # a missing file fails as an input, later
    else:
        matches = sorted(glob.glob(name, recursive=True))
        if not matches:
            raise InputError(f"{name}: the pattern matches no file")
        for match in matches:
            if Path(match).is_file():
                yield Path(match), PurePosixPath(Path(match).name)


def discover(names: list[str], output_dir: Path, output_format: str) -> list[CorpusInput]:
    """The input files behind the arguments `names`, in order, each once, with their outputs.
    InputError when two inputs would write the same output file, or there is none."""
    if output_format not in OUTPUT_SUFFIXES:
        raise InputError(
            f"--format {output_format} writes one document per input, not lines that shards "
            "join; with --output-dir use jsonl, conll or doccano"
        )
    skip = output_dir.resolve()
    inputs: dict[Path, CorpusInput] = {}
    writers: dict[str, Path] = {}
    for name in names:
        for path, relative in _named(name, skip):
            output = output_name(relative, output_format)
            if path.resolve() in inputs:
                continue
            if output in writers:
                raise InputError(
                    f"{writers[output]} and {path} would both be written to {output_dir / output}"
                    ": give their folder instead, or tag them into different --output-dirs"
                )
            writers[output] = path
            inputs[path.resolve()] = CorpusInput(path, output)
    if not inputs:
        raise InputError(f"no input files in {', '.join(names)}")
    return list(inputs.values())


def open_decompressed(raw: IO[bytes], name: str | Path) -> IO[bytes]:
    """`raw` (a file opened for reading bytes), decompressed when `name` ends in ``.gz``,
    ``.bz2`` or ``.xz``."""
    decompressor = DECOMPRESSORS.get(Path(name).suffix)
    return raw if decompressor is None else decompressor(raw)
