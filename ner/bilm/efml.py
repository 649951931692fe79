"""Reading an ELMoForManyLangs (HIT-SCIR) model folder (docs/bilm.md, "ELMoForManyLangs models").

A folder holds `config.json` (whose `config_path` names the architecture JSON), `char.dic`,
`word.dic` and two PyTorch state dicts, `token_embedder.pkl` and `encoder.pkl`. The state dicts are
read with `torch.load(..., weights_only=True)` (tensors only, never arbitrary pickled objects) and
converted to the weights.hdf5 layout our `BiLM` loads, so its char-CNN and LSTM run unchanged:

* the highway gate is reversed (theirs: g·x + (1 − g)·f(Ax); bilm-tf's: g·f(Ax) + (1 − g)·x), so
  the gate's weights and bias are negated, as AllenNLP does when it reads bilm-tf files;
* the LSTM gates are reordered from (i, f, g, o) to TF's (i, j, f, o) and the forget bias loses the
  +1 our LSTM adds back;
* the token projection reads [word vector ‖ char-CNN], so it is split: the char part is the
  char-CNN's projection, the word part is folded into one projected vector per word.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ner.bilm.char_ids import MAX_CHARACTERS_PER_TOKEN
from ner.bilm.lstm import tf_cell_prefix
from ner.bilm.options import BiLMOptions, _Filter, _narrow
from ner.common.errors import NerError
from ner.common.file_schema import validate

CONFIG_FILE = "config.json"
STATE_FILES = ("token_embedder.pkl", "encoder.pkl")
BOUNDARIES = ("<bos>", "<eos>")  # the sentence start and end, as tokens
CHAR_SPECIALS = ("<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>")
WORD_SPECIALS = ("<oov>", "<pad>", "<bos>", "<eos>")

# The architecture every published model names (`config_path`) and the package ships in its own
# `configs/` folder (as cnn_0_100_… and cnn_50_100_…, identical), often not in the model folder.
PUBLISHED_ARCHITECTURE: dict[str, Any] = {
    "encoder": {
        "name": "elmo",
        "projection_dim": 512,
        "cell_clip": 3,
        "proj_clip": 3,
        "dim": 4096,
        "n_layers": 2,
    },
    "token_embedder": {
        "name": "cnn",
        "activation": "relu",
        "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
        "n_highway": 2,
        "word_dim": 100,
        "char_dim": 50,
        "max_characters_per_token": 50,
    },
}
_PUBLISHED_NAMES = ("cnn_0_100_512_4096_sample.json", "cnn_50_100_512_4096_sample.json")


class EfmlError(NerError, ValueError):
    """An ELMoForManyLangs folder is unreadable, unsafe to read or of an unsupported shape."""


def is_efml_folder(path: str | Path) -> bool:
    """Whether `path` is a folder in the ELMoForManyLangs layout (it holds config.json)."""
    return (Path(path) / CONFIG_FILE).is_file()


@dataclass(frozen=True)
class EfmlVocabulary:
    """The character and word dictionaries of a model and how its tokens become ids.

    Their quirks, kept for exactness: a token longer than 48 characters is cut to 48 (for its word
    id too); a token's characters are framed by the ids the package calls `<eow>` first and
    `<bow>` last (it swaps them), then padded with `<pad>` (a learnt vector, not zeros); the
    sentence boundaries (and the tokens `<bos>`/`<eos>` in a text) are the single characters
    `<bos>`/`<eos>` framed the same way.
    """

    chars: Mapping[str, int]
    words: Mapping[str, int] | None  # None: a char-only model

    def cut(self, token: str) -> str:
        """The token as the package reads it: at most 48 characters."""
        return token[: MAX_CHARACTERS_PER_TOKEN - 2]

    def char_ids(self, token: str) -> tuple[int, ...]:
        """The 50 character ids of a token, shifted +1 (0 is our sentence padding); the token
        `<bos>` or `<eos>` (a boundary, or the same string in the text) is its single character."""
        if token in BOUNDARIES:
            return self._framed([self.chars[token]])
        oov = self.chars["<oov>"]
        return self._framed([self.chars.get(c, oov) for c in self.cut(token)])

    def _framed(self, ids: list[int]) -> tuple[int, ...]:
        row = [self.chars["<eow>"], *ids, self.chars["<bow>"]]
        row += [self.chars["<pad>"]] * (MAX_CHARACTERS_PER_TOKEN - len(row))
        return tuple(i + 1 for i in row)

    def word_id(self, token: str) -> int:
        """The word id of a token (`<bos>`/`<eos>` for the boundaries), `<oov>` when unknown."""
        assert self.words is not None
        return self.words.get(self.cut(token), self.words["<oov>"])


@dataclass(frozen=True)
class EfmlModel:
    """An ELMoForManyLangs folder converted: options, weights.hdf5-layout arrays, vocabulary."""

    options: BiLMOptions
    arrays: dict[str, np.ndarray]
    vocabulary: EfmlVocabulary
    word_vectors: np.ndarray | None  # (words, P): each word's share of the token projection

    @classmethod
    def read(cls, folder: str | Path) -> "EfmlModel":
        """Read and check a model folder; every error names the file and, where one, the key."""
        folder = Path(folder)
        architecture = _architecture(folder)
        embedder = architecture.token_embedder
        chars = read_dictionary(folder / "char.dic", CHAR_SPECIALS)
        words = read_dictionary(folder / "word.dic", WORD_SPECIALS) if embedder.word_dim else None
        options = _options(architecture, len(chars), folder)
        tokens = _checked(folder / STATE_FILES[0], _embedder_shapes(options, words, embedder))
        lstm = _checked(folder / STATE_FILES[1], _encoder_shapes(options))
        arrays, word_vectors = _token_arrays(tokens, options, embedder.word_dim)
        arrays.update(_lstm_arrays(lstm, options))
        return cls(options, arrays, EfmlVocabulary(chars, words), word_vectors)


def efml_options(folder: str | Path) -> BiLMOptions:
    """The architecture of a model folder, read without its weights (config and char.dic)."""
    folder = Path(folder)
    chars = read_dictionary(folder / "char.dic", CHAR_SPECIALS)
    return _options(_architecture(folder), len(chars), folder)


def architecture_file(folder: str | Path) -> Path | None:
    """The architecture JSON inside the folder that config.json names (None: a built-in one)."""
    folder = Path(folder)
    return _architecture_candidates(folder, _config_path(folder))[0]


def _options(architecture: "_Architecture", chars: int, folder: Path) -> BiLMOptions:
    embedder, encoder = architecture.token_embedder, architecture.encoder
    return BiLMOptions(
        char_embedding_dim=embedder.char_dim,
        filters=tuple((width, count) for width, count in embedder.filters),
        n_highway=embedder.n_highway,
        activation=embedder.activation,
        lstm_dim=encoder.dim,
        projection_dim=encoder.projection_dim,
        n_layers=encoder.n_layers,
        cell_clip=float(encoder.cell_clip) if encoder.cell_clip else None,
        proj_clip=float(encoder.proj_clip) if encoder.proj_clip else None,
        char_vocabulary=chars,
        source=str(folder),
    )


def read_dictionary(path: Path, specials: tuple[str, ...]) -> dict[str, int]:
    """A `char.dic`/`word.dic`: `entry<TAB>id` per line, parsed as the package does (a line whose
    entry is blank, the space character, stands for U+3000)."""
    entries: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise EfmlError(f"{path}: cannot read the dictionary: {error}") from error
    for number, line in enumerate(lines, 1):
        fields = line.strip().split("\t")
        if len(fields) == 1:
            fields.insert(0, "\u3000")
        if len(fields) != 2 or not fields[1].isdigit():
            raise EfmlError(f"{path}, line {number}: expected 'entry<TAB>id', found {line!r}")
        entries[fields[0]] = int(fields[1])
    beyond = [entry for entry, i in entries.items() if i >= len(entries)]
    if beyond:
        raise EfmlError(f"{path}: ids must be below the {len(entries)} entries ({beyond[0]!r})")
    missing = [s for s in specials if s not in entries]
    if missing:
        raise EfmlError(f"{path}: lacks the entries {missing} every model's dictionary has")
    return entries


class _Schema(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", protected_namespaces=())


_Positive = Annotated[int, Field(gt=0, description="a positive integer")]


class _Encoder(_Schema):
    name: str = Field(
        pattern="^(?i:elmo)$", description="'elmo' (the 'lstm' encoder is unsupported)"
    )
    projection_dim: _Positive
    dim: _Positive
    n_layers: _Positive
    cell_clip: float = Field(ge=0, description="a number >= 0 (0: no clipping)")
    proj_clip: float = Field(ge=0, description="a number >= 0 (0: no clipping)")


class _TokenEmbedder(_Schema):
    name: str = Field(pattern="^(?i:cnn)$", description="'cnn' (the 'lstm' one is unsupported)")
    activation: str = Field(pattern="^(relu|tanh)$", description="'relu' or 'tanh'")
    filters: list[Annotated[_Filter, AfterValidator(_narrow)]] = Field(
        min_length=1, description="a non-empty list of [width, count] pairs, widths at most 50"
    )
    n_highway: int = Field(ge=0, description="a whole number >= 0")
    word_dim: int = Field(ge=0, description="a whole number >= 0 (0: a char-only model)")
    char_dim: _Positive = Field(description="a positive integer (word-only models are unsupported)")
    max_characters_per_token: int = Field(
        ge=50, le=50, description="50 (the only length the published models use)"
    )


class _Architecture(_Schema):
    encoder: _Encoder
    token_embedder: _TokenEmbedder


def _architecture(folder: Path) -> _Architecture:
    """The architecture JSON that config.json's `config_path` names, looked up as the package
    does: the path, its name in the folder, then the configs the package ships."""
    named = _config_path(folder)
    candidate, name = _architecture_candidates(folder, named)
    if candidate is not None:
        try:
            content = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise EfmlError(f"{candidate}: cannot read the architecture: {error}") from error
        return validate(_Architecture, content, candidate, EfmlError)
    if name in _PUBLISHED_NAMES:
        return validate(_Architecture, PUBLISHED_ARCHITECTURE, name, EfmlError)
    raise EfmlError(
        f"{folder / CONFIG_FILE}: config_path {named!r} is neither in the folder nor a "
        "published one"
    )


def _config_path(folder: Path) -> str:
    """config.json's `config_path`: the architecture JSON's name."""
    config_file = folder / CONFIG_FILE
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EfmlError(f"{config_file}: cannot read the model config: {error}") from error
    named = config.get("config_path") if isinstance(config, dict) else None
    if not isinstance(named, str):
        raise EfmlError(f"{config_file}: field 'config_path' must name the architecture JSON")
    return named


def _architecture_candidates(folder: Path, named: str) -> tuple[Path | None, str]:
    """The architecture file in the folder (its path, then its name), or None; and its name."""
    name = Path(named.replace("\\", "/")).name
    for candidate in (folder / named, folder / name):
        if candidate.is_file():
            return candidate, name
    return None, name


def _embedder_shapes(
    options: BiLMOptions, words: Mapping[str, int] | None, embedder: _TokenEmbedder
) -> dict[str, tuple[int, ...]]:
    """Every tensor of token_embedder.pkl and its shape."""
    width_c, filters = options.char_embedding_dim, options.num_filters
    shapes: dict[str, tuple[int, ...]] = {}
    if words is not None:
        shapes["word_emb_layer.embedding.weight"] = (len(words), embedder.word_dim)
    shapes["char_emb_layer.embedding.weight"] = (options.char_vocabulary, width_c)
    for i, (width, count) in enumerate(options.filters):
        shapes[f"convolutions.{i}.weight"] = (count, width_c, width)
        shapes[f"convolutions.{i}.bias"] = (count,)
    for k in range(options.n_highway):
        shapes[f"highways._layers.{k}.weight"] = (2 * filters, filters)
        shapes[f"highways._layers.{k}.bias"] = (2 * filters,)
    shapes["projection.weight"] = (options.projection_dim, embedder.word_dim + filters)
    shapes["projection.bias"] = (options.projection_dim,)
    return shapes


def _encoder_shapes(options: BiLMOptions) -> dict[str, tuple[int, ...]]:
    """Every tensor of encoder.pkl and its shape."""
    proj, hidden = options.projection_dim, options.lstm_dim
    shapes: dict[str, tuple[int, ...]] = {}
    for layer in range(options.n_layers):
        for direction in ("forward", "backward"):
            prefix = f"{direction}_layer_{layer}"
            shapes[f"{prefix}.input_linearity.weight"] = (4 * hidden, proj)
            shapes[f"{prefix}.state_linearity.weight"] = (4 * hidden, proj)
            shapes[f"{prefix}.state_linearity.bias"] = (4 * hidden,)
            shapes[f"{prefix}.state_projection.weight"] = (proj, hidden)
    return shapes


def load_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """A state dict read without unpickling anything but tensors (both torch file formats)."""
    try:
        content = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise EfmlError(f"{path}: missing (an ELMoForManyLangs model has {STATE_FILES})") from None
    except Exception as error:
        lines = str(error).strip().splitlines()
        reason = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
        raise EfmlError(f"{path}: refused, not a plain tensor state dict ({reason})") from None
    if not isinstance(content, Mapping) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in content.items()
    ):
        raise EfmlError(f"{path}: not a state dict of named tensors")
    return dict(content)


def _checked(path: Path, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """The tensors of a state dict as float32 arrays, each checked against its expected shape."""
    tensors = load_state_dict(path)
    arrays = {}
    for key, shape in shapes.items():
        if key not in tensors:
            raise EfmlError(f"{path}: lacks the tensor {key!r}")
        if tuple(tensors[key].shape) != shape:
            found = tuple(tensors[key].shape)
            raise EfmlError(f"{path}: tensor {key!r} has shape {found}, the config implies {shape}")
        arrays[key] = tensors[key].detach().to(torch.float32).numpy()
    return arrays


def _token_arrays(
    tensors: Mapping[str, np.ndarray], options: BiLMOptions, word_dim: int
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """token_embedder.pkl → char-CNN datasets of weights.hdf5, and the projected word vectors."""
    filters = options.num_filters
    arrays = {"char_embed": tensors["char_emb_layer.embedding.weight"]}
    for i in range(len(options.filters)):
        arrays[f"CNN/W_cnn_{i}"] = tensors[f"convolutions.{i}.weight"].transpose(2, 1, 0)[None]
        arrays[f"CNN/b_cnn_{i}"] = tensors[f"convolutions.{i}.bias"]
    for k in range(options.n_highway):
        weight, bias = (
            tensors[f"highways._layers.{k}.weight"],
            tensors[f"highways._layers.{k}.bias"],
        )
        arrays[f"CNN_high_{k}/W_transform"] = weight[:filters].T.copy()
        arrays[f"CNN_high_{k}/b_transform"] = bias[:filters].copy()
        arrays[f"CNN_high_{k}/W_carry"] = -weight[filters:].T  # reversed gate: σ(−z) = 1 − σ(z)
        arrays[f"CNN_high_{k}/b_carry"] = -bias[filters:]
    projection = tensors["projection.weight"]  # (P, word_dim + F)
    arrays["CNN_proj/W_proj"] = projection[:, word_dim:].T.copy()
    arrays["CNN_proj/b_proj"] = tensors["projection.bias"]
    if not word_dim:
        return arrays, None
    words = tensors["word_emb_layer.embedding.weight"]  # (V, word_dim)
    return arrays, (words.astype(np.float64) @ projection[:, :word_dim].T).astype(np.float32)


def _lstm_arrays(tensors: Mapping[str, np.ndarray], options: BiLMOptions) -> dict[str, np.ndarray]:
    """encoder.pkl → the LSTM datasets of weights.hdf5 (TF layout and gate order)."""
    hidden = options.lstm_dim
    gates = np.r_[0:hidden, 2 * hidden : 3 * hidden, hidden : 2 * hidden, 3 * hidden : 4 * hidden]
    arrays = {}
    for layer in range(options.n_layers):
        for direction, name in enumerate(("forward", "backward")):
            prefix, cell = f"{name}_layer_{layer}", tf_cell_prefix(direction, layer)
            kernel = np.concatenate(
                [
                    tensors[f"{prefix}.input_linearity.weight"],
                    tensors[f"{prefix}.state_linearity.weight"],
                ],
                axis=1,
            )  # (4H, P_in + P), gates i, f, g, o
            bias = tensors[f"{prefix}.state_linearity.bias"][gates].copy()
            bias[2 * hidden : 3 * hidden] -= 1.0  # our LSTM adds TF's forget bias back
            arrays[f"{cell}/W_0"] = kernel[gates].T.copy()
            arrays[f"{cell}/B"] = bias
            arrays[f"{cell}/W_P_0"] = tensors[f"{prefix}.state_projection.weight"].T.copy()
    return arrays
