"""The biLM hyper-parameters of an ELMo `options.json` (docs/bilm.md, "The options file")."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field

from ner.common.errors import NerError
from ner.common.file_schema import STRICT, validate
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
    char_vocabulary: int = 261  # rows of the char embedding table (raw ids; other formats differ)
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
        options = validate(_Options, content, source, OptionsError)
        lstm, cnn = options.lstm, options.char_cnn
        return cls(
            char_embedding_dim=cnn.embedding.dim,
            filters=tuple((width, count) for width, count in cnn.filters),
            n_highway=cnn.n_highway,
            activation=cnn.activation,
            lstm_dim=lstm.dim,
            projection_dim=lstm.projection_dim,
            n_layers=lstm.n_layers,
            cell_clip=float(lstm.cell_clip) if lstm.cell_clip else None,
            proj_clip=float(lstm.proj_clip) if lstm.proj_clip else None,
            n_characters=cnn.n_characters,
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


def _one_of(*allowed: Any) -> AfterValidator:
    def check(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(f"not one of {allowed}")
        return value

    return AfterValidator(check)


def _narrow(pair: list[int]) -> list[int]:
    if pair[0] > 50:
        raise ValueError("wider than the 50 characters of a token")
    return pair


_Positive = Annotated[int, Field(gt=0, description="a positive integer")]
_Clip = Annotated[
    float | None, Field(None, ge=0, description="a number >= 0 (0 or null: no clipping)")
]
_Filter = Annotated[list[Annotated[int, Field(gt=0)]], Field(min_length=2, max_length=2)]


class _Schema(BaseModel):
    model_config = STRICT


class _Lstm(_Schema):
    dim: _Positive
    projection_dim: _Positive
    n_layers: _Positive
    cell_clip: _Clip
    proj_clip: _Clip
    use_skip_connections: Annotated[bool, _one_of(True)] = Field(
        description="true (unsupported otherwise: all published ELMo models use skip "
        "connections; AllenNLP refuses others too)"
    )


class _CharEmbedding(_Schema):
    dim: _Positive


class _CharCnn(_Schema):
    embedding: _CharEmbedding = Field(description="an object with the 'dim' of characters")
    filters: list[Annotated[_Filter, AfterValidator(_narrow)]] = Field(
        min_length=1,
        description="a non-empty list of [width, count] pairs of positive integers, "
        "widths at most 50",
    )
    n_highway: int = Field(0, ge=0, description="a whole number >= 0")
    n_characters: Annotated[int, _one_of(261, 262)] = Field(262, description="262 (or 261)")
    max_characters_per_token: Annotated[int, _one_of(50)] = Field(
        50, description="50 (unsupported otherwise: ELMo character ids are always 50 per token)"
    )
    activation: Annotated[str, _one_of(*_ACTIVATIONS)] = Field(
        "relu", description=f"one of {', '.join(_ACTIVATIONS)} (unsupported otherwise)"
    )


class _Options(_Schema):
    """options.json (keys that only training reads, such as ``dropout``, are ignored)."""

    lstm: _Lstm = Field(description="an object with the biLSTM's settings")
    char_cnn: _CharCnn = Field(
        description="an object with the character CNN's settings (models with word inputs "
        "only, which have none, are unsupported)"
    )
