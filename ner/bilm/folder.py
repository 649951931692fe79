"""A biLM as one folder (docs/bilm.md, "A biLM folder in training and in model folders"): its
format, the files that make it, one digest over them, and a zip of it fetched and unpacked.

Two formats: ``efml`` (an ELMoForManyLangs folder: config.json, char.dic, word.dic, two state
dicts) and ``allennlp`` (a folder with one options ``*.json`` and one weights ``*.hdf5``). A
folder's digest is the sha256 of the list of (name, sha256) of the files its loader reads, so a
copy of those files anywhere, or the same files unpacked from a zip, has the same digest.
"""

import hashlib
import json
import zipfile
from pathlib import Path

from ner.bilm.efml import CONFIG_FILE, STATE_FILES, architecture_file, efml_options
from ner.bilm.options import BiLMOptions
from ner.common.archives import ArchiveError, extract
from ner.common.downloads import DownloadError, fetch, is_url
from ner.common.errors import NerError
from ner.common.paths import data_dir
from ner.common.verified import sha256_file

FORMATS = ("efml", "allennlp")
# The most bytes a biLM zip without a recorded size may have (a published ELMoForManyLangs
# model is about 400 MB, the largest 700 MB).
MAX_ZIP_BYTES = 2 * 2**30


class BiLMFormatError(NerError, ValueError):
    """A path is not a biLM in any format this loader reads, or not in the format named."""


def is_zip(source: str | Path) -> bool:
    """Whether a biLM source names a zip file (by its name: a URL's content is not at hand)."""
    return str(source).lower().endswith(".zip")


def detect_format(folder: str | Path, named: str | None = None) -> str:
    """The format of a biLM folder (``efml`` or ``allennlp``), checked against `named` if given.

    # Parameters
    folder: the unpacked model folder.
    named: the format the configuration names (None: detect it).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise BiLMFormatError(f"{folder}: not a folder (expected a biLM model folder)")
    if named is not None and named not in FORMATS:
        raise BiLMFormatError(f"{folder}: unknown biLM format {named!r}; expected one of {FORMATS}")
    found = "efml" if (folder / CONFIG_FILE).is_file() else _allennlp_or_none(folder)
    if found is None:
        options, weights = _allennlp_candidates(folder)
        raise BiLMFormatError(
            f"{folder}: expected an ELMoForManyLangs folder (config.json, char.dic, *.pkl) or one "
            f"options *.json with one weights *.hdf5; found {len(options)} .json, "
            f"{len(weights)} .hdf5"
        )
    if named is not None and named != found:
        raise BiLMFormatError(f"{folder}: format {named} was named, but the folder is {found}")
    return found


def _allennlp_candidates(folder: Path) -> tuple[list[Path], list[Path]]:
    """The options and weights files: ``options.json`` when there (an NLPL or simple_elmo folder
    may hold other JSON files beside it, such as a metadata file), else every ``*.json``."""
    named = folder / "options.json"
    options = [named] if named.is_file() else sorted(folder.glob("*.json"))
    return options, sorted(folder.glob("*.hdf5"))


def _allennlp_or_none(folder: Path) -> str | None:
    options, weights = _allennlp_candidates(folder)
    return "allennlp" if len(options) == 1 and len(weights) == 1 else None


def allennlp_pair(folder: str | Path) -> tuple[Path, Path]:
    """The options and weights files of an ``allennlp`` folder."""
    options, weights = _allennlp_candidates(Path(folder))
    if len(options) != 1 or len(weights) != 1:
        detect_format(folder, "allennlp")  # raises, naming what was found
    return options[0], weights[0]


def model_files(folder: str | Path, format: str) -> list[Path]:
    """The files the loader of `format` reads from `folder`, in a fixed order."""
    folder = Path(folder)
    if format == "allennlp":
        return list(allennlp_pair(folder))
    architecture = architecture_file(folder)
    names = [CONFIG_FILE, "char.dic", "word.dic", *STATE_FILES]
    files = [folder / name for name in names if (folder / name).is_file()]
    return files + ([architecture] if architecture is not None else [])


def folder_digest(folder: str | Path, format: str) -> str:
    """sha256 over the names and sha256 digests of the folder's model files."""
    listing = [[path.name, sha256_file(path)] for path in model_files(folder, format)]
    return hashlib.sha256(json.dumps(sorted(listing)).encode("utf-8")).hexdigest()


def folder_options(folder: str | Path, format: str) -> BiLMOptions:
    """The architecture of a biLM folder, read without its weights."""
    if format == "efml":
        return efml_options(folder)
    return BiLMOptions.from_file(allennlp_pair(folder)[0])


_DIGESTS: dict[tuple, str] = {}  # (path, size, mtime, inode) → sha256 of the zips unpacked


def _digest(archive: Path) -> str:
    """sha256 of a zip, hashed once per process while it is unchanged."""
    stat = archive.stat()
    key = (str(archive), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_file(archive)
    return _DIGESTS[key]


def local_folder(
    source: str | Path,
    *,
    sha256: str | None = None,
    max_bytes: int | None = MAX_ZIP_BYTES,
    download: bool = True,
) -> Path:
    """The local model folder for `source`: a folder as is; a zip (a path or URL, downloaded once
    into the data folder, checked against `sha256` or, without it, against the digest recorded
    on its first download) unpacked once into the data folder. A zip whose files lie in one
    sub-folder gives that sub-folder."""
    text = str(source)
    if not is_zip(text):
        if is_url(text):
            raise BiLMFormatError(f"{text}: a biLM folder given by URL must be a .zip of it")
        return Path(text)
    try:
        archive = fetch(text, sha256=sha256, desc="biLM", max_bytes=max_bytes, download=download)
    except DownloadError as error:
        raise DownloadError(
            f"{error}; or download the biLM zip elsewhere and give its path "
            "(elmo.path=ZIP_OR_FOLDER)"
        ) from None
    if not zipfile.is_zipfile(archive):
        raise ArchiveError(f"{text}: not a zip file")
    target = data_dir() / "extracted" / f"{(sha256 or _digest(archive))[:16]}-{archive.stem}"
    unpacked = extract(archive, target)
    inner = [p for p in unpacked.iterdir() if p.is_dir() and p.name != "__MACOSX"]
    holds_model = (unpacked / CONFIG_FILE).is_file() or any(unpacked.glob("*.hdf5"))
    return inner[0] if not holds_model and len(inner) == 1 else unpacked
