"""The self-contained ``model/`` directory a training run saves, and reading it back.

Layout (``FORMAT_VERSION`` 4)::

    model/
      archive.json            manifest: format + version, model config, file digests, biLM
                              reference, loader settings (metadata), package version, and
                              ``manifest_sha256``, the digest of the manifest itself
      weights.safetensors     the tagger's state dict (word-embedding rows = the GloVe rows used,
                              as trained); read with safetensors, never by unpickling
      vocabularies/<name>.json  plain-JSON vocabularies (``tagger``: words, chars, tags;
                              ``pretrained_words``)
      config.json             the run's full (resolved) configuration, for the record
      bilm/options.json, bilm/weights.hdf5   the frozen biLM itself when it is small; otherwise
                              archive.json holds its path or URL plus sha256 and size, and it is
                              fetched (a URL only when the caller allows downloads, and never
                              more bytes than the recorded size)

A *compact* folder (``ner-models export``, the shipped taggers) stores its floating-point weights
in float16 (``weights_dtype``; they are widened to float32 on load), refers to a biLM shipped in
this package by its place in ``ner/pretrained/`` (``package``, with sha256 and size) instead of
copying it, and may leave out tensors that the loader rebuilds from a pinned public source (the
manifest's ``rebuilt`` list; see `ner.model.saving` for the pretrained word vectors).

Loading needs neither Hydra nor the training data. The directory is written under a temporary
name and renamed into place, so a crash never leaves a half-written model that looks complete.
A model directory of another format version is refused with an error that says which versions
are involved. Every file's sha256 is checked on load, archive.json's own included (a hand-edited
tag list is refused, not silently loaded), and every manifest field is checked for its type and
form, so a damaged or crafted manifest gives an `ArchiveError` naming the field. The digests
carry no key: they detect damage and careless edits, not a deliberate edit that rewrites them
too. Version 1 directories (written before the manifest carried its own digest) still load, with
a warning and without that check of archive.json.
"""

import hashlib
import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import torch
from pydantic import AfterValidator, BaseModel, Field, create_model, model_validator
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ner.bilm.bilm import DEFAULT_STATE, STATE_MODES
from ner.common.archives import ArchiveError
from ner.common.downloads import DownloadRefused, fetch, is_url, sha256_file
from ner.common.file_schema import STRICT, validate
from ner.common.files import atomic_directory, write_json
from ner.common.paths import PRETRAINED_DIR
from ner.data.labels import TOKENS
from ner.data.tag_schemes import SCHEMES
from ner.embeddings.glove import GLOVE_6B_50D

logger = logging.getLogger(__name__)

FORMAT = "ner-elmo-tagger"
FORMAT_VERSION = 4
# 1: the manifest has no digest of its own; 3 adds compact folders (float16, package references);
# 4 names the word/char/tag vocabularies ``tagger`` (``encoder`` before, still read)
READABLE_VERSIONS = (1, 2, 3, 4)
WEIGHT_DTYPES = {"float32": torch.float32, "float16": torch.float16}
# Tensors a compact folder may leave out, each rebuilt on load from one of these pinned sources.
REBUILDABLE = {"pretrained_words": (GLOVE_6B_50D,)}
MANIFEST = "archive.json"
WEIGHTS = "weights.safetensors"
CONFIG = "config.json"
EMBED_BILM_MAX_BYTES = 100 * 2**20
# The most bytes read for a biLM file whose manifest entry gives no size (written before sizes
# were recorded); otherwise a download stops at the recorded size.
MAX_BILM_BYTES = 4 * 2**30


@dataclass(frozen=True)
class BiLMFiles:
    """Where a frozen biLM lives: options/weights as local paths or URLs, with their sha256
    (computed from local files when None), and the state mode it was run in
    ("warm" | "stateless" | "stateful"; by default "warm", as training's ``elmo.state``)."""

    options: str
    weights: str
    state: str = DEFAULT_STATE
    options_sha256: str | None = None
    weights_sha256: str | None = None


@dataclass
class LoadedArchive:
    """Everything a model directory holds, as plain values; `bilm` has local, verified paths."""

    directory: Path
    manifest: dict[str, Any]
    model_config: dict[str, Any]
    state_dict: dict[str, torch.Tensor]
    vocabularies: dict[str, Any]
    config: dict[str, Any]
    bilm: BiLMFiles | None
    rebuilt: dict[str, Any]  # state-dict names left out → {"source", "count", "sha256"}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ner-elmo")
    except PackageNotFoundError:
        return "unknown"


def _write_json(path: Path, content: Any) -> None:
    write_json(path, content, indent=2)


def _shipped_part(path: Path, digest: str) -> str | None:
    """Where a file with `path`'s name and content lies among the biLMs shipped in this package
    (relative to ``ner/pretrained/``), or None: a run's copy of the shipped biLM is found too."""
    for candidate in sorted(PRETRAINED_DIR.glob(f"*/{path.name}")):
        if candidate.stat().st_size == path.stat().st_size and sha256_file(candidate) == digest:
            return candidate.relative_to(PRETRAINED_DIR).as_posix()
    return None


def _bilm_entry(
    bilm: BiLMFiles, target: Path, embed_max_bytes: int, refer_to_package: bool
) -> dict[str, Any]:
    """The manifest's biLM entry. Both files are fetched (URLs are downloaded once, into the
    cache) and hashed. With `refer_to_package`, files of a biLM shipped in this package are
    recorded by their place in it; otherwise, when together no larger than `embed_max_bytes`,
    they are copied into `target`/bilm/ (with their origin: the URL, or the folder and file name
    they came from), else the entry keeps their source: the URL, or the absolute local path."""
    entry: dict[str, Any] = {"state": bilm.state}
    sources = {"options": bilm.options, "weights": bilm.weights}
    digests = {"options": bilm.options_sha256, "weights": bilm.weights_sha256}
    paths = {name: fetch(source, sha256=digests[name]) for name, source in sources.items()}
    small = sum(path.stat().st_size for path in paths.values()) <= embed_max_bytes
    for name, source in sources.items():
        path = paths[name]
        digest = digests[name] or sha256_file(path)
        size = path.stat().st_size
        shipped = _shipped_part(path, digest) if refer_to_package else None
        if shipped is not None:
            entry[name] = {"package": shipped, "sha256": digest, "size": size}
        elif small:
            # Where it came from: a URL, or a local file's folder and name (the biLM's name,
            # e.g. ``elmo-small-news/options.json``), never the machine's path to it.
            origin = str(source) if is_url(str(source)) else "/".join(Path(source).parts[-2:])
            relative = f"bilm/{'options.json' if name == 'options' else 'weights.hdf5'}"
            (target / "bilm").mkdir(exist_ok=True)
            shutil.copyfile(path, target / relative)
            entry[name] = {"file": relative, "sha256": digest, "size": size, "origin": origin}
        else:
            location = str(source) if is_url(str(source)) else str(path.resolve())
            entry[name] = {"source": location, "sha256": digest, "size": size}
    return entry


def save_archive(
    directory: str | Path,
    *,
    model: torch.nn.Module,
    model_config: dict[str, Any],
    vocabularies: dict[str, Any],
    bilm: BiLMFiles | None = None,
    config: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    embed_bilm_max_bytes: int = EMBED_BILM_MAX_BYTES,
    weights_dtype: str = "float32",
    rebuilt: dict[str, Any] | None = None,
    refer_to_package: bool = False,
) -> Path:
    """Write `model` as a model directory at `directory` (replacing one already there).

    model_config: the plain-dict constructor arguments that rebuild `model`; vocabularies:
    name → JSON-serialisable vocabulary; bilm: the frozen biLM the model reads (None if it
    uses no ELMo); config: the run's resolved configuration; metadata: other plain settings the
    loader needs (kept in the manifest). For a compact folder: weights_dtype ``float16`` stores
    floating-point tensors at half size; rebuilt: state-dict names left out → how the loader
    rebuilds them (kept in the manifest); refer_to_package: record a biLM shipped in this
    package by reference. Returns the directory.
    """
    directory = Path(directory)
    rebuilt = rebuilt or {}
    with atomic_directory(directory, replace=True) as staging:
        save_file(
            _stored_tensors(model, WEIGHT_DTYPES[weights_dtype], set(rebuilt)),
            staging / WEIGHTS,
            metadata={"format": FORMAT},
        )
        (staging / "vocabularies").mkdir()
        for name, vocabulary in vocabularies.items():
            _write_json(staging / "vocabularies" / f"{name}.json", vocabulary)
        _write_json(staging / CONFIG, config or {})
        files = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "package_version": _package_version(),
            "model_config": model_config,
            "vocabularies": sorted(vocabularies),
            "metadata": metadata or {},
            "weights_dtype": weights_dtype,
            "rebuilt": rebuilt,
            "bilm": (
                _bilm_entry(bilm, staging, embed_bilm_max_bytes, refer_to_package) if bilm else None
            ),
            "sha256": {name: sha256_file(staging / name) for name in files},
        }
        manifest["manifest_sha256"] = manifest_digest(manifest)
        _write_json(staging / MANIFEST, manifest)
    return directory


def _stored_tensors(
    model: torch.nn.Module, dtype: torch.dtype, left_out: set[str]
) -> dict[str, torch.Tensor]:
    """The state dict as written: `left_out` names dropped, float32 tensors in `dtype`. Clones:
    safetensors refuses tensors that share memory; buffers and params alike."""
    stored = {}
    for name, tensor in model.state_dict().items():
        if name in left_out:
            continue
        tensor = tensor.detach().cpu()
        if tensor.dtype == torch.float32:
            tensor = tensor.to(dtype)
        stored[name] = tensor.contiguous().clone()
    return stored


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a model directory, after checking its format and version."""
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        what = "does not exist" if not directory.exists() else f"has no {MANIFEST}"
        raise ArchiveError(
            f"{directory} is not a model directory: it {what}. Pass the model/ folder that "
            "ner-train writes into its output directory."
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveError(f"{path} does not describe a {FORMAT} model")
    version = manifest.get("format_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ArchiveError(
            f"{directory} holds a model in format version {version} (written by ner-elmo "
            f"{manifest.get('package_version', 'unknown')}), but this ner-elmo "
            f"({_package_version()}) reads format version {FORMAT_VERSION}. Load it with the "
            "version that wrote it, or retrain."
        )
    if version == 1:
        logger.warning("%s: format version 1, whose manifest has no checksum of its own", path)
    elif manifest.get("manifest_sha256") != manifest_digest(manifest):
        raise ArchiveError(
            f"{path} was changed after it was written (its manifest_sha256 does not match its "
            "content): the model cannot be trusted; use an unmodified copy or retrain"
        )
    validate(_Manifest, manifest, path, ArchiveError)
    return manifest


def model_name(directory: Path) -> str:
    """A model directory's name; for a run's ``model/`` folder, the run's."""
    resolved = directory.resolve()
    return resolved.parent.name if resolved.name == "model" else resolved.name


def model_version(directory: Path) -> str:
    """The model's name (`model_name`) and the first 12 hex digits of its manifest's sha256, as
    ``ner-serve`` reports them: what an annotation tool records as a prediction's model."""
    return f"{model_name(directory)}-{sha256_file(directory / MANIFEST)[:12]}"


def manifest_digest(manifest: dict[str, Any]) -> str:
    """sha256 of the manifest's canonical JSON, without its own ``manifest_sha256`` field."""
    content = {key: value for key, value in manifest.items() if key != "manifest_sha256"}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_DIGEST = re.compile(r"[0-9a-f]{64}")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _matching(pattern: re.Pattern[str]) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"does not match {pattern.pattern}")
        return value

    return AfterValidator(check)


def _relative(value: str) -> str:
    """A relative path inside the model directory (no absolute path, no ``..``)."""
    if not all(_SAFE_NAME.fullmatch(p) and p not in (".", "..") for p in value.split("/")):
        raise ValueError("not a relative path inside the model directory")
    return value


def _distinct(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("repeated values")
    return values


_Digest = Annotated[str, _matching(_DIGEST), Field(description="a 64-digit hex sha256 digest")]
_RelativeFile = Annotated[str, AfterValidator(_relative)]
_Count = Annotated[int, Field(ge=0)]


class _Schema(BaseModel):
    model_config = STRICT


class _TaggerSettings(_Schema):
    """The TaggerModel settings; only the tags are checked here (the rest when it is built)."""

    tags: Annotated[list[Annotated[str, Field(min_length=1)]], AfterValidator(_distinct)] = Field(
        min_length=1, description="a non-empty list of distinct tag strings"
    )


class _Metadata(_Schema):
    corpus_scheme: Literal[(*SCHEMES, TOKENS)] | None = Field(  # type: ignore[valid-type]
        None, description=f"one of {', '.join((*SCHEMES, TOKENS))} (or null)"
    )
    scores: dict[Literal["dev", "test"], dict[str, float]] | None = Field(
        None, description="the training run's dev and test scores: objects of numbers (or null)"
    )


class _RebuiltEntry(_Schema):
    source: str
    count: _Count = Field(description="the number of rows (a whole number)")
    sha256: _Digest


class _Closed(_Schema, extra="forbid"):
    pass


# Tensor name → its entry, whose source must be one of the name's pinned sources. Here and below,
# a field whose default is None but whose type does not allow None may be left out, not null.
_Rebuilt = create_model(
    "_Rebuilt",
    __base__=_Closed,
    **{
        name: (
            create_model(
                f"_Rebuilt_{name}",
                __base__=_RebuiltEntry,
                source=(Literal[sources], Field(description=f"one of {', '.join(sources)}")),
            ),
            Field(None, description="an object with its source, count and sha256"),
        )
        for name, sources in REBUILDABLE.items()
    },
)


class _BiLMFile(_Schema):
    """Where one biLM file is: exactly one of `file`, `package` and `source`."""

    file: _RelativeFile = Field(None, description="a relative path inside the model directory")
    package: _RelativeFile = Field(None, description="a file under ner/pretrained/")
    source: str = Field(None, min_length=1, description="a path or URL")
    sha256: _Digest
    size: _Count = Field(0, description="the file's size in bytes (a whole number)")

    @model_validator(mode="after")
    def _one_place(self) -> "_BiLMFile":
        if len({"file", "package", "source"} & self.model_fields_set) != 1:
            raise ValueError("not exactly one of file, package and source")
        return self


_FILE_ENTRY = "an object with exactly one of 'file', 'package' or 'source', and 'sha256'"


class _BiLM(_Schema):
    state: Literal[STATE_MODES] = Field(  # type: ignore[valid-type]
        description=f"one of {', '.join(STATE_MODES)} (or bilm null)"
    )
    options: _BiLMFile = Field(description=_FILE_ENTRY)
    weights: _BiLMFile = Field(description=_FILE_ENTRY)


class _Manifest(_Schema):
    """The fields of archive.json that the loader reads (format and versions are checked
    first, by `read_manifest`)."""

    package_version: str = Field("", description="a string")
    tagger: _TaggerSettings = Field(
        alias="model_config", description="an object of TaggerModel settings"
    )
    vocabularies: list[Annotated[str, _matching(_SAFE_NAME)]] = Field(
        description="a list of vocabulary names (letters, digits, _ . -)"
    )
    metadata: _Metadata = Field(description="an object")
    weights_dtype: Literal[tuple(WEIGHT_DTYPES)] = Field(  # type: ignore[valid-type]
        "float32", description=f"one of {', '.join(WEIGHT_DTYPES)}"
    )
    rebuilt: _Rebuilt = Field(  # type: ignore[valid-type]
        None, description=f"an object with keys among {', '.join(REBUILDABLE)}"
    )
    sha256: dict[_RelativeFile, _Digest] = Field(
        description="an object from relative file names to hex sha256 digests"
    )
    bilm: _BiLM | None = Field(
        None, description="an object with the biLM's state, options and weights (or null)"
    )


def _checked_file(directory: Path, manifest: dict[str, Any], name: str) -> Path:
    path = directory / name
    expected = manifest.get("sha256", {}).get(name)
    if not path.is_file():
        raise ArchiveError(f"model directory {directory} is incomplete: {name} is missing")
    if expected is None:
        raise ArchiveError(f"{directory / MANIFEST} lists no sha256 for {name}")
    try:
        actual = sha256_file(path)
    except OSError as error:  # unreadable (permissions, an I/O error): the user's to fix
        raise ArchiveError(f"{path} cannot be read: {error.strerror or error}") from None
    if actual != expected:
        raise ArchiveError(
            f"{path} is corrupt or was changed: sha256 {actual}, the manifest says {expected}"
        )
    return path


def _read_json(directory: Path, manifest: dict[str, Any], name: str) -> Any:
    path = _checked_file(directory, manifest, name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{path} is not valid JSON: {error}") from None


def _resolve_bilm(
    directory: Path, entry: dict[str, Any] | None, allow_download: bool
) -> BiLMFiles | None:
    """Local, sha256-verified paths of the biLM files; a URL is downloaded (once, no larger than
    the manifest's size) only when `allow_download`."""
    if entry is None:
        return None
    paths, digests = {}, {}
    for name in ("options", "weights"):
        item = entry[name]
        if "file" in item:
            source = str(directory / item["file"])
        elif "package" in item:
            source = str(PRETRAINED_DIR / item["package"])
        else:
            source = item["source"]
        try:
            path = fetch(
                source,
                sha256=item["sha256"],
                desc=f"biLM {name}",
                max_bytes=item.get("size", MAX_BILM_BYTES),
                download=allow_download,
            )
        except DownloadRefused:
            raise ArchiveError(
                f"the biLM {name} file of model {directory} is to be downloaded from {source}. "
                "A model folder can name any address, so loading downloads only when allowed: "
                "if you trust where the folder comes from, load it with allow_download=True "
                "(ner-predict/ner-serve --allow-download), or point the manifest at a local copy"
            ) from None
        except OSError as error:  # missing, too large, corrupt (ChecksumError), not downloadable
            raise ArchiveError(f"the biLM {name} file of model {directory}: {error}") from None
        paths[name] = str(path)
        digests[name] = item["sha256"]
    return BiLMFiles(
        options=paths["options"],
        weights=paths["weights"],
        state=entry["state"],
        options_sha256=digests["options"],
        weights_sha256=digests["weights"],
    )


def load_archive(directory: str | Path, *, allow_download: bool = False) -> LoadedArchive:
    """Read a model directory written by `save_archive` (any error: `ArchiveError`).

    allow_download: fetch a biLM that the manifest gives as a URL and that is not in the
    download cache yet (by default that is an error: the folder chooses the address)."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    weights = _checked_file(directory, manifest, WEIGHTS)
    try:
        state_dict = load_file(weights)
    except SafetensorError as error:
        raise ArchiveError(f"{weights} is not a readable safetensors file: {error}") from None
    return LoadedArchive(
        directory=directory,
        manifest=manifest,
        model_config=manifest["model_config"],
        state_dict=state_dict,
        vocabularies={
            name: _read_json(directory, manifest, f"vocabularies/{name}.json")
            for name in manifest["vocabularies"]
        },
        config=_read_json(directory, manifest, CONFIG),
        bilm=_resolve_bilm(directory, manifest.get("bilm"), allow_download),
        rebuilt=manifest.get("rebuilt", {}),
    )
