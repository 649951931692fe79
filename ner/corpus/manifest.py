"""The manifest of an output folder (``DIR/.ner-predict/manifest.json``): what its outputs are
made of, so that a rerun resumes only when it would write the same bytes.

It records the model's digest, the options that change the output, and each input's size and
SHA-256 (keyed by its output file). A run whose model, options or an input's content differ from
the manifest's is refused with one line naming the difference; a run may add inputs.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

from ner.common.downloads import sha256_file
from ner.common.errors import InputError
from ner.common.files import file_lock, write_json

MANIFEST = "manifest.json"
VERSION = 1


def folder_digest(folder: Path) -> str:
    """The SHA-256 over a model folder's files: each one's relative path and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(sha256_file(path).encode())
    return digest.hexdigest()


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def difference(stored: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    """What makes `wanted` (this run) another run than `stored` (the manifest), or None."""
    if stored.get("version") != VERSION:
        return (
            f"it was written by another version of ner-predict (manifest {stored.get('version')})"
        )
    if stored.get("model") != wanted["model"]:
        return (
            f"it was tagged by another model (digest {str(stored.get('model'))[:12]}, this one "
            f"{wanted['model'][:12]})"
        )
    options = stored.get("options", {})
    for option in sorted(options.keys() | wanted["options"].keys()):
        if options.get(option) != wanted["options"].get(option):
            return (
                f"it was tagged with {_flag(option)} {options.get(option)}, not "
                f"{wanted['options'].get(option)}"
            )
    for output, entry in wanted["inputs"].items():
        before = stored.get("inputs", {}).get(output)
        if before is not None and before != entry:
            return f"the input behind {output} has changed since (size or content differ)"
    return None


def claim(state: Path, wanted: dict[str, Any]) -> None:
    """Write the manifest of this run into the folder `state`, or check it against the one
    there (adding this run's new inputs); InputError naming the difference when it is another
    run's. `wanted`: ``model`` (digest), ``options`` and ``inputs`` ({output: {size, sha256}})."""
    path = state / MANIFEST
    with file_lock(path):
        stored = None
        if path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
                raise InputError(f"{path}: cannot read the manifest ({error})") from None
        if isinstance(stored, dict):
            reason = difference(stored, wanted)
            if reason is not None:
                raise InputError(
                    f"{state.parent} holds another run's output: {reason}; use another "
                    "--output-dir, or delete that folder to start over"
                )
            wanted = {**wanted, "inputs": {**stored.get("inputs", {}), **wanted["inputs"]}}
        write_json(path, {"version": VERSION, **wanted})
