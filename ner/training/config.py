"""The training config's schema: typed dataclasses for every group of ``conf/train.yaml``.

Hydra merges the YAML files and the command line into `TrainConfig` (registered as
``train_schema``), so a wrong type or a misspelt key fails while the config is composed. Ranges
and choices (`ner.common.schema`) are checked by `validate` before any data loads. Every message
names the key, the value and what is expected.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from ner.bilm.bilm import DEFAULT_STATE, STATE_MODES
from ner.bilm.folder import FORMATS as BILM_FORMATS
from ner.bilm.folder import detect_format, folder_options, is_zip
from ner.bilm.options import BiLMOptions
from ner.bilm.scalar_mix import MixError, mixed_layers
from ner.common.errors import InputError
from ner.common.schema import (
    ConfigError,
    at_least,
    check_ranges,
    defaults_of,
    fraction,
    one_of,
    share,
)
from ner.data.corpora import configured_options, corpus_source
from ner.data.corpus_options import options_schema
from ner.data.tag_schemes import SCHEMES
from ner.pretrain import pretrained_files
from ner.tagger.model import WORD_TUNINGS, TaggerModel
from ner.training.loop import Trainer

# The tagger's defaults, written once in `TaggerModel`'s signature: the model node and the
# groups that choose its inputs (embeddings, elmo) take theirs from here.
MODEL = defaults_of(TaggerModel)
TRAINER = defaults_of(Trainer)  # the same for the ``trainer`` node


def _literal(value: Any) -> str:
    """`value` as a literal inside an interpolation (None → null, booleans in lower case)."""
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def follows(key: str, argument: str) -> Any:
    """A model argument set in the group that chooses its input: ``${oc.select:KEY,DEFAULT}``,
    with the constructor's default when that input is off (the value is then unused)."""
    return f"${{oc.select:{key},{_literal(MODEL[argument])}}}"


# ``data.options``: the options of every corpus source (`ner.data.corpus_options`), null
# leaving the source's default; `validate` refuses one the corpus's source does not take.
CorpusOptions = options_schema()


@dataclass
class DataConfig:
    """The corpus: a name (``ner-data list``), a folder or a file, and how to batch it."""

    name: str = MISSING
    options: CorpusOptions = field(default_factory=CorpusOptions)  # type: ignore[valid-type]
    max_sentences: int | None = at_least(1, None)  # per split, for smoke runs
    # Nested training subsets (learning curves): this fraction of train, picked by subset_seed.
    train_fraction: float = share(1.0)
    subset_seed: int = 0
    batch_size: int = at_least(1, 64)


@dataclass
class GloveConfig:
    """Word embeddings: pretrained GloVe rows (``source``), or a random init (source null)."""

    source: str | None = "glove.6B.50d"
    member: str | None = None  # the file inside a .zip that holds several
    sha256: str | None = None  # pins a downloaded source file
    dim: int = at_least(1, MODEL["word_dim"])
    trainable: bool = MODEL["word_trainable"]  # false: no word row trains (else: tuning applies)
    # How the rows initialised from `source` train (rows of words the table lacks always train):
    # fine_tune: freely; frozen: not at all; anchored: freely, plus anchor_weight × the squared
    # distance from their pretrained values; projected: not at all, but every word vector (new
    # words' too) goes through a learned dim × dim map that starts as the identity.
    tuning: str = one_of(*WORD_TUNINGS, default=MODEL["word_tuning"])
    anchor_weight: float = at_least(0.0, 0.01)  # with tuning=anchored


@dataclass
class CharConfig:
    """The tagger's char-CNN over each word."""

    dim: int = at_least(1, MODEL["char_dim"])
    filters: int = at_least(1, MODEL["char_filters"])
    width: int = at_least(1, MODEL["char_width"])
    max_chars: int = at_least(1, 50)  # longer words are truncated


@dataclass
class EmbeddingsConfig:
    """The word-level inputs besides ELMo; null switches a family off."""

    glove: GloveConfig | None = field(default_factory=GloveConfig)
    char: CharConfig | None = field(default_factory=CharConfig)
    # Where the word and char vocabularies come from: the train split (new words keep their
    # GloVe vector, others get the trained unknown vector), or all = train+dev+test text, the
    # transductive setting of AllenNLP's configs that produced the published numbers.
    vocabulary: str = one_of("train", "all", default="train")
    # Probability that a word seen once in training is replaced by the unknown word in a
    # training batch (Lample et al., 2016), so that the unknown vector is trained; 0 = never.
    unknown_replacement: float = fraction(0.5)


@dataclass
class ExpectedShapes:
    """A preset's shapes, checked against ``options_file`` when the biLM loads."""

    options_file: str = MISSING  # the shapes apply to this file only
    lstm_dim: int = at_least(1)
    projection_dim: int = at_least(1)
    n_highway: int = at_least(0)
    num_filters: int = at_least(1)
    output_dim: int = at_least(1)
    num_layers: int = at_least(1)
    parameters: int = at_least(1)


@dataclass
class MixConfig:
    """How the tagger combines the biLM layers (a learned scalar mix unless fixed)."""

    layers: list[int] | None = MODEL["elmo_mix_layers"]  # which layers to mix (null = all)
    fixed_weights: list[float] | None = MODEL["elmo_fixed_weights"]  # one per layer; null: learned
    layer_norm: bool = MODEL["elmo_layer_norm"]
    l2: float = at_least(0.0, 0.1)  # penalty on the pre-softmax mix weights


@dataclass
class ElmoConfig:
    """Everything about the biLM features: the weights, state mode, cache, mix and dropout."""

    name: str = MISSING
    options_file: str | None = None  # a path or URL
    weight_file: str | None = None  # a path or URL
    expected: ExpectedShapes | None = None
    # A biLM folder (ELMoForManyLangs, or one options .json + one weights .hdf5) or a .zip of
    # one (a path or URL); when set it replaces options_file and weight_file.
    path: str | None = None
    format: str | None = one_of(*BILM_FORMATS, default=None)  # of `path`; null: detected
    sha256: str | None = None  # of `path`'s zip; null: the digest of its first download is kept
    state: str = one_of(*STATE_MODES, default=DEFAULT_STATE)
    batch_size: int = at_least(1, 32)  # sentences per biLM batch when features are computed
    cache: bool = True  # compute the frozen biLM's layers once per corpus and reuse them
    mix: MixConfig = field(default_factory=MixConfig)
    dropout: float = fraction(MODEL["elmo_dropout"])  # on the mixed ELMo vector
    # Continue pretraining the biLM before its features are computed (ner.pretrain.adapt): on
    # the training split's sentences (task), or on those and the adapt_text files (one
    # whitespace-tokenized sentence per line) or named pretraining sources (domain);
    # adapt_steps updates of the biLM after adapt_softmax_steps of its fresh softmax alone, at
    # adapt_lr_scale times the softmax's learning rate; cached by content.
    adapt: str = one_of("none", "task", "domain", default="none")
    adapt_text: list[str] | None = None
    adapt_steps: int = at_least(1, 600)
    adapt_softmax_steps: int = at_least(0, 100)
    adapt_lr_scale: float = at_least(0.0, 1.0)


@dataclass
class ModelConfig:
    """The BiLSTM-CRF tagger: `ner.tagger.model.TaggerModel`'s arguments, with its defaults."""

    _target_: str = "ner.tagger.model.TaggerModel"
    tag_scheme: str = one_of(*SCHEMES, default=MODEL["tag_scheme"])  # the scheme the CRF tags in
    constrain_decoding: bool = MODEL["constrain_decoding"]
    crf: bool = MODEL["crf"]  # false: a softmax per token (per-token labels only)
    dropout: float = fraction(MODEL["dropout"])  # on the embeddings and on the encoder output
    hidden_size: int = at_least(1, MODEL["hidden_size"])
    num_layers: int = at_least(1, MODEL["num_layers"])
    lstm_dropout: float = fraction(MODEL["lstm_dropout"])
    # The input layers: interpolated from the groups that choose the inputs (embeddings, elmo),
    # so that this node is the constructor's arguments. The sizes that come from the data (tags,
    # vocabularies, the biLM's output) are added by the run.
    word_dim: int = follows("embeddings.glove.dim", "word_dim")
    word_trainable: bool = follows("embeddings.glove.trainable", "word_trainable")
    word_tuning: str = follows("embeddings.glove.tuning", "word_tuning")
    char_dim: int = follows("embeddings.char.dim", "char_dim")
    char_filters: int = follows("embeddings.char.filters", "char_filters")
    char_width: int = follows("embeddings.char.width", "char_width")
    # (an interpolation is a string: nothing mutable is shared)
    elmo_mix_layers: list[int] | None = follows("elmo.mix.layers", "elmo_mix_layers")  # noqa: RUF009
    elmo_fixed_weights: list[float] | None = follows(  # noqa: RUF009
        "elmo.mix.fixed_weights", "elmo_fixed_weights"
    )
    elmo_layer_norm: bool = follows("elmo.mix.layer_norm", "elmo_layer_norm")
    elmo_dropout: float = follows("elmo.dropout", "elmo_dropout")


@dataclass
class OptimizerConfig:
    """A torch optimizer, built for the model's parameters."""

    _target_: str = "torch.optim.Adam"
    _partial_: bool = True
    lr: float = at_least(0.0, 0.001)
    weight_decay: float = at_least(0.0, 0.0)


@dataclass
class TrainerConfig:
    """The training loop: `ner.training.loop.Trainer`'s arguments, with its defaults (the run
    adds the settings of the other groups)."""

    _target_: str = "ner.training.loop.Trainer"
    _partial_: bool = True
    max_epochs: int = at_least(1, TRAINER["max_epochs"])
    patience: int | None = at_least(1, TRAINER["patience"])  # null: never stop early
    eval_every: int = at_least(1, TRAINER["eval_every"])  # score dev every N epochs and the last
    grad_norm: float | None = at_least(0.0, TRAINER["grad_norm"])
    # Padded positions (rows × longest sentence) above which a training batch runs in row
    # chunks before its one optimizer step, to bound memory (null = one pass per batch).
    max_batch_tokens: int | None = at_least(1, TRAINER["max_batch_tokens"])
    eval_batch_size: int = at_least(1, TRAINER["eval_batch_size"])
    device: str = TRAINER["device"]  # auto | cpu | cuda | cuda:N
    num_threads: str = TRAINER["num_threads"]  # torch CPU threads: a number, or auto
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    scheduler: dict[str, Any] | None = TRAINER["scheduler"]


@dataclass
class WandbConfig:
    """Weights & Biases logging into the run dir (``logger=none`` switches it off)."""

    _target_: str = "ner.training.loggers.WandbLogger"
    project: str = "ner-elmo"
    mode: str = one_of("online", "offline", "disabled", default="offline")
    entity: str | None = None
    group: str | None = None
    tags: list[str] | None = None
    name: str | None = None


@dataclass
class TrainConfig:
    """The whole training config (``ner-train --cfg job`` prints it)."""

    data: DataConfig = field(default_factory=DataConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    elmo: ElmoConfig | None = None
    model: ModelConfig = field(default_factory=ModelConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    logger: WandbConfig | None = None
    seed: int = 1
    resume: str | None = None  # a run dir: continue it from its last checkpoint
    progress: bool = True  # tqdm bars
    variant: str | None = None  # the name `ner-report` groups runs by


def validate(cfg: DictConfig) -> None:
    """Check ranges and choices of a composed training config (types Hydra already checked) and
    the scalar mix against the biLM's options.json; raises `ConfigError` or `OptionsError`."""
    check_ranges(cfg, TrainConfig)
    check_corpus_options(cfg.data)
    elmo = cfg.get("elmo")
    if elmo is not None:
        if not elmo.path and not (elmo.options_file and elmo.weight_file):
            raise ConfigError(
                f"elmo={elmo.name}: set elmo.path=DIR_OR_ZIP (a biLM folder or zip) or both "
                "elmo.options_file and elmo.weight_file (or elmo=none for no ELMo)"
            )
        mix = elmo.mix
        try:
            mixed_layers(bilm_layers(elmo), mix.layers, mix.fixed_weights)
        except MixError as error:
            value = list(mix[error.option])
            raise ConfigError(f"elmo.mix.{error.option}={value}: {error}") from None
        check_adaptation(elmo)
    glove = cfg.embeddings.get("glove")
    if glove is not None and glove.tuning != "fine_tune" and not glove.source:
        raise ConfigError(
            f"embeddings.glove.tuning={glove.tuning}: needs pretrained rows, but "
            "embeddings.glove.source is null; use embeddings.glove.tuning=fine_tune"
        )
    if glove is not None and glove.tuning == "anchored" and not glove.trainable:
        raise ConfigError(
            "embeddings.glove.tuning=anchored: anchors rows that train, but "
            "embeddings.glove.trainable is false"
        )
    threads = str(cfg.trainer.num_threads)
    if threads != "auto" and not (threads.isdigit() and int(threads) > 0):
        raise ConfigError(
            f"trainer.num_threads={cfg.trainer.num_threads}: expected a positive number or auto"
        )


def check_corpus_options(data: DictConfig) -> None:
    """Refuse a ``data.options`` key that the corpus's source does not take, naming the key and
    the corpus (`ner.data.corpora.corpus_source`), before any data loads."""
    options = configured_options(OmegaConf.to_container(data, resolve=True))
    try:
        corpus_source(data.name, **options)
    except InputError as error:
        raise ConfigError(f"data.options.{error}") from None


def check_adaptation(elmo: DictConfig) -> None:
    """``elmo.adapt_text`` is given exactly when ``elmo.adapt=domain``."""
    texts = list(elmo.get("adapt_text") or [])
    adapt = elmo.get("adapt", "none")
    if adapt == "domain" and not texts:
        raise ConfigError(
            "elmo.adapt=domain: needs elmo.adapt_text=[FILE,...], text files of one sentence per "
            "line or named pretraining sources such as reuters (elmo.adapt=task adapts on the "
            "training sentences alone)"
        )
    if adapt != "none" and elmo.get("path"):
        raise ConfigError(
            f"elmo.adapt={adapt}: adapts an options.json + weights.hdf5 pair (elmo.options_file, "
            f"elmo.weight_file), not a biLM folder or zip (elmo.path={elmo.path})"
        )
    if adapt != "domain" and texts:
        raise ConfigError(
            f"elmo.adapt_text={texts}: read only with elmo.adapt=domain (now elmo.adapt={adapt})"
        )


def bilm_layers(elmo: DictConfig) -> int | None:
    """L + 1 of the configured biLM without loading it: from its options.json when that is a
    local file (a malformed one raises `OptionsError` naming it, before any data loads), else
    from its preset's expected shapes; None when neither is at hand (a URL not downloaded yet:
    loading the biLM checks it)."""
    if elmo.get("path"):
        folder = Path(str(elmo.path)).expanduser()
        if is_zip(folder) or not folder.is_dir():
            return None
        return folder_options(folder, detect_format(folder, elmo.get("format"))).num_layers
    path = Path(str(elmo.options_file)).expanduser()
    if path.is_file():
        return BiLMOptions.from_file(path).num_layers
    expected = elmo.get("expected")
    if (
        expected is not None
        and expected.get("options_file") == elmo.options_file
        and not OmegaConf.is_missing(expected, "num_layers")
    ):
        return int(expected.num_layers)
    return None


def _shipped_bilm(name: str, part: str) -> str:
    """``${shipped_bilm:NAME,options|weights}``: a file of a biLM shipped inside the package."""
    options, weights = pretrained_files(name)
    return str({"options": options, "weights": weights}[part])


def register() -> None:
    """Register the schema and the ``shipped_bilm`` resolver (idempotent)."""
    ConfigStore.instance().store(name="train_schema", node=TrainConfig)
    if not OmegaConf.has_resolver("shipped_bilm"):
        OmegaConf.register_new_resolver("shipped_bilm", _shipped_bilm)


register()
