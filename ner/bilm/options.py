"""The biLM hyper-parameters of an ELMo `options.json` (docs/bilm.md, "The options file")."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ner.common.errors import NerError


class OptionsError(NerError, ValueError):
    """options.json is malformed or asks for something this biLM does not support."""


_ACTIVATIONS = ("relu", "tanh")


@dataclass(frozen=True)
class BiLMOptions:
    """Architecture of a biLM: char-CNN + highway + projection, then an L-layer biLSTM."""

    char_embedding_dim: int  # C
    filters: tuple[tuple[int, int], ...]  # (kernel width, channels) per convolution
    n_highway: int  # K
    activation: str  # after max-pooling each convolution: "relu" | "tanh"
    lstm_dim: int  # H, LSTM cell size
    projection_dim: int  # P, token vector and per-direction output size
    n_layers: int  # L, LSTM layers per direction
    cell_clip: float | None
    proj_clip: float | None
    n_characters: int = 262
    source: str = "options"  # where these came from, for error messages

    @property
    def num_filters(self) -> int:
        """F, the width of the char-CNN output and of the highway layers."""
        return sum(count for _, count in self.filters)

    @property
    def output_dim(self) -> int:
        """2P, the width of every biLM layer (forward ‖ backward)."""
        return 2 * self.projection_dim

    @property
    def num_layers(self) -> int:
        """Layers returned by the biLM: the token layer plus one per LSTM layer."""
        return self.n_layers + 1

    @classmethod
    def from_file(cls, path: str | Path) -> "BiLMOptions":
        """Read and validate an options.json file."""
        try:
            content = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise OptionsError(f"{path}: cannot read ELMo options JSON: {error}") from error
        return cls.from_dict(content, source=str(path))

    @classmethod
    def from_dict(cls, content: Mapping[str, Any], source: str = "options") -> "BiLMOptions":
        """Validate the options.json structure; every error names the offending key."""
        if not isinstance(content, Mapping):
            raise OptionsError(f"{source}: expected a JSON object, got {type(content).__name__}")
        keys = _Keys(content, source)
        if keys.get("lstm.use_skip_connections", bool, False) is not True:
            raise OptionsError(
                f"{source}: unsupported options: 'lstm.use_skip_connections' must be true "
                "(all published ELMo models use skip connections; AllenNLP refuses others too)"
            )
        filters = _filters(keys)
        n_characters, activation, n_highway = _char_cnn_settings(keys)
        cell_clip, proj_clip = (_clip(keys, f"lstm.{name}") for name in ("cell_clip", "proj_clip"))
        return cls(
            char_embedding_dim=keys.positive("char_cnn.embedding.dim"),
            filters=filters,
            n_highway=n_highway,
            activation=activation,
            lstm_dim=keys.positive("lstm.dim"),
            projection_dim=keys.positive("lstm.projection_dim"),
            n_layers=keys.positive("lstm.n_layers"),
            cell_clip=cell_clip,
            proj_clip=proj_clip,
            n_characters=n_characters,
            source=source,
        )

    def to_dict(self) -> dict[str, Any]:
        """The options.json content (inference form: n_characters 262)."""
        return {
            "lstm": {
                "dim": self.lstm_dim,
                "projection_dim": self.projection_dim,
                "n_layers": self.n_layers,
                "cell_clip": self.cell_clip,
                "proj_clip": self.proj_clip,
                "use_skip_connections": True,
            },
            "char_cnn": {
                "embedding": {"dim": self.char_embedding_dim},
                "filters": [list(pair) for pair in self.filters],
                "n_highway": self.n_highway,
                "n_characters": 262,
                "max_characters_per_token": 50,
                "activation": self.activation,
            },
        }

    def save(self, path: str | Path) -> None:
        """Write options.json."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")


class _Keys:
    """Typed reads of an options.json mapping by dotted path; errors name the path."""

    def __init__(self, content: Mapping[str, Any], source: str) -> None:
        self.content, self.source = content, source

    def get(self, path: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        """The value at `path` of type `kind` (bool only where asked for); `default` when the
        key is missing (and when it is null, if the default is None)."""
        node: Any = self.content
        for key in path.split("."):
            if not isinstance(node, Mapping) or key not in node:
                if default is not ...:
                    return default
                raise OptionsError(f"{self.source}: missing key '{path}'")
            node = node[key]
        if node is None and default is None:
            return None
        if isinstance(node, bool) != (kind is bool) or not isinstance(node, kind):
            raise OptionsError(f"{self.source}: '{path}' = {node!r} has the wrong type")
        return node

    def positive(self, path: str) -> int:
        value = self.get(path, int)
        if value <= 0:
            raise OptionsError(f"{self.source}: '{path}' must be a positive integer, got {value}")
        return value


def _filters(keys: _Keys) -> tuple[tuple[int, int], ...]:
    """``char_cnn.filters``: at least one [width ≤ 50, count] pair of positive integers."""
    filters = []
    for index, pair in enumerate(keys.get("char_cnn.filters", list)):
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in pair)
        ):
            raise OptionsError(
                f"{keys.source}: 'char_cnn.filters[{index}]' = {pair!r} is not [width, count]"
            )
        if pair[0] > 50:
            raise OptionsError(f"{keys.source}: 'char_cnn.filters[{index}]' is wider than 50 chars")
        filters.append((pair[0], pair[1]))
    if not filters:
        raise OptionsError(f"{keys.source}: 'char_cnn.filters' is empty")
    return tuple(filters)


def _char_cnn_settings(keys: _Keys) -> tuple[int, str, int]:
    """``char_cnn``'s n_characters, activation and n_highway (50 characters per token, always)."""
    source = keys.source
    max_chars = keys.get("char_cnn.max_characters_per_token", int, 50)
    if max_chars != 50:
        raise OptionsError(
            f"{source}: unsupported options: 'char_cnn.max_characters_per_token' = {max_chars}"
            " (ELMo character ids are always 50 per token)"
        )
    n_characters = keys.get("char_cnn.n_characters", int, 262)
    if n_characters not in (261, 262):
        raise OptionsError(
            f"{source}: 'char_cnn.n_characters' = {n_characters}, expected 262 (or 261)"
        )
    activation = keys.get("char_cnn.activation", str, "relu")
    if activation not in _ACTIVATIONS:
        raise OptionsError(
            f"{source}: unsupported options: 'char_cnn.activation' = {activation!r}"
            f" (expected one of {_ACTIVATIONS})"
        )
    n_highway = keys.get("char_cnn.n_highway", int, 0)
    if n_highway < 0:
        raise OptionsError(f"{source}: 'char_cnn.n_highway' must be >= 0, got {n_highway}")
    return n_characters, activation, n_highway


def _clip(keys: _Keys, path: str) -> float | None:
    """An LSTM clip value: None for 0 or null, which mean no clipping (AllenNLP)."""
    value = keys.get(path, (int, float), None)
    if value is not None and value < 0:
        raise OptionsError(f"{keys.source}: '{path}' must be >= 0, got {value}")
    return float(value) if value else None
