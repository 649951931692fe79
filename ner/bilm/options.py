"""The biLM hyper-parameters of an ELMo `options.json` (docs/bilm.md, "The options file")."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ner.common.errors import NerError
from ner.common.files import write_json


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

        def get(path: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
            node: Any = content
            for key in path.split("."):
                if not isinstance(node, Mapping) or key not in node:
                    if default is not ...:
                        return default
                    raise OptionsError(f"{source}: missing key '{path}'")
                node = node[key]
            if node is None and default is None:
                return None
            if isinstance(node, bool) != (kind is bool) or not isinstance(node, kind):
                raise OptionsError(f"{source}: '{path}' = {node!r} has the wrong type")
            return node

        def positive(path: str) -> int:
            value = get(path, int)
            if value <= 0:
                raise OptionsError(f"{source}: '{path}' must be a positive integer, got {value}")
            return value

        if not isinstance(content, Mapping):
            raise OptionsError(f"{source}: expected a JSON object, got {type(content).__name__}")
        if get("lstm.use_skip_connections", bool, False) is not True:
            raise OptionsError(
                f"{source}: unsupported options: 'lstm.use_skip_connections' must be true "
                "(all published ELMo models use skip connections; AllenNLP refuses others too)"
            )
        raw_filters = get("char_cnn.filters", list)
        filters = []
        for index, pair in enumerate(raw_filters):
            if (
                not isinstance(pair, list | tuple)
                or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in pair)
            ):
                raise OptionsError(
                    f"{source}: 'char_cnn.filters[{index}]' = {pair!r} is not [width, count]"
                )
            if pair[0] > 50:
                raise OptionsError(f"{source}: 'char_cnn.filters[{index}]' is wider than 50 chars")
            filters.append((pair[0], pair[1]))
        if not filters:
            raise OptionsError(f"{source}: 'char_cnn.filters' is empty")
        max_chars = get("char_cnn.max_characters_per_token", int, 50)
        if max_chars != 50:
            raise OptionsError(
                f"{source}: unsupported options: 'char_cnn.max_characters_per_token' = {max_chars}"
                " (ELMo character ids are always 50 per token)"
            )
        n_characters = get("char_cnn.n_characters", int, 262)
        if n_characters not in (261, 262):
            raise OptionsError(
                f"{source}: 'char_cnn.n_characters' = {n_characters}, expected 262 (or 261)"
            )
        activation = get("char_cnn.activation", str, "relu")
        if activation not in _ACTIVATIONS:
            raise OptionsError(
                f"{source}: unsupported options: 'char_cnn.activation' = {activation!r}"
                f" (expected one of {_ACTIVATIONS})"
            )
        n_highway = get("char_cnn.n_highway", int, 0)
        if n_highway < 0:
            raise OptionsError(f"{source}: 'char_cnn.n_highway' must be >= 0, got {n_highway}")
        clips = {}
        for name in ("cell_clip", "proj_clip"):
            value = get(f"lstm.{name}", (int, float), None)
            if value is not None and value < 0:
                raise OptionsError(f"{source}: 'lstm.{name}' must be >= 0, got {value}")
            clips[name] = float(value) if value else None  # 0 / null = no clipping (AllenNLP)
        return cls(
            char_embedding_dim=positive("char_cnn.embedding.dim"),
            filters=tuple(filters),
            n_highway=n_highway,
            activation=activation,
            lstm_dim=positive("lstm.dim"),
            projection_dim=positive("lstm.projection_dim"),
            n_layers=positive("lstm.n_layers"),
            cell_clip=clips["cell_clip"],
            proj_clip=clips["proj_clip"],
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
        write_json(path, self.to_dict(), indent=2)
