"""Where a frozen biLM comes from, as training, the feature cache and a model folder name it: an
options/weights pair (`BiLMFiles`) or one folder, or a zip of it (`BiLMFolder`, docs/bilm.md, "A
biLM folder in training and in model folders")."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ner.bilm.bilm import DEFAULT_STATE, BiLM
from ner.bilm.folder import detect_format, folder_digest, folder_options, local_folder
from ner.bilm.load import load_bilm
from ner.bilm.options import BiLMOptions
from ner.bilm.weights import resolve
from ner.common.verified import sha256_file


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

    @property
    def location(self) -> str:
        """What names this biLM in messages: its options file."""
        return self.options

    def architecture(self) -> BiLMOptions:
        """The options, read without the weights (a URL is downloaded once)."""
        return BiLMOptions.from_file(resolve(self.options, desc="ELMo options"))

    def load(self, expected: Mapping[str, Any] | None = None) -> BiLM:
        """The biLM, its shapes checked against a preset's `expected` block."""
        return BiLM.from_files(self.options, self.weights, state=self.state, expected=expected)

    def identity(self) -> tuple[str, dict[str, Any]]:
        """The weights' sha256 and the options, as the feature cache keys its entries."""
        options = json.loads(resolve(self.options, desc="ELMo options").read_text())
        return sha256_file(resolve(self.weights, desc="ELMo weights")), options


@dataclass(frozen=True)
class BiLMFolder:
    """A frozen biLM in one folder (`ner.bilm.folder`): `path` is the folder, or a zip of it (a
    path or URL, downloaded and unpacked once); `format` ``efml`` | ``allennlp`` (None:
    detected); `sha256`: of the zip (None: the digest recorded at its first download is checked
    afterwards); `digest`: the folder's (`folder_digest`), checked when given."""

    path: str
    format: str | None = None
    state: str = DEFAULT_STATE
    sha256: str | None = None
    digest: str | None = None

    @property
    def location(self) -> str:
        """What names this biLM in messages: its folder or zip."""
        return self.path

    def folder(self, download: bool = True) -> Path:
        """The local model folder (a zip fetched and unpacked first)."""
        return local_folder(self.path, sha256=self.sha256, download=download)

    def detected_format(self) -> str:
        """`format`, or the one the folder is in."""
        return detect_format(self.folder(), self.format)

    def architecture(self) -> BiLMOptions:
        """The architecture, read without the weights."""
        return folder_options(self.folder(), self.detected_format())

    def load(self, expected: Mapping[str, Any] | None = None) -> BiLM:
        """The biLM (`expected` describes a preset's options file, not a folder: unused)."""
        return load_bilm(self.folder(), state=self.state, format=self.format)

    def identity(self) -> tuple[str, dict[str, Any]]:
        """The folder's digest and its format, as the feature cache keys its entries."""
        format = self.detected_format()
        return folder_digest(self.folder(), format), {"format": format}


BiLMSource = BiLMFiles | BiLMFolder


def configured_bilm(elmo: Mapping[str, Any]) -> BiLMSource:
    """The biLM an ``elmo`` config group names: ``path`` (a folder or zip, with ``format`` and
    ``sha256``) when set, else ``options_file`` and ``weight_file``."""
    state = str(elmo.get("state") or DEFAULT_STATE)
    if elmo.get("path"):
        return BiLMFolder(str(elmo["path"]), elmo.get("format"), state, elmo.get("sha256"))
    return BiLMFiles(str(elmo["options_file"]), str(elmo["weight_file"]), state)
