"""The pretraining config's schema: typed dataclasses for ``conf/pretrain.yaml``.

Hydra merges the YAML file and the command line into `PretrainConfig` (registered as
``pretrain_schema``), so a wrong type or a misspelt key fails while the config is composed;
`validate` checks ranges and choices before any corpus is read. The ``model`` block keeps the
options.json layout and is checked by `ner.bilm.options.BiLMOptions`.
"""

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig

from ner.common.schema import ConfigError, at_least, check_ranges, fraction, one_of, probability


@dataclass
class CorpusConfig:
    """The training text: named sources and/or files with one tokenized sentence per line."""

    sources: list[str] = MISSING
    heldout_per_mille: int = at_least(0, 5)  # CRC-32(text) % 1000 < this: held out
    max_sentence_tokens: int = at_least(1, 400)


@dataclass
class VocabConfig:
    """The softmax targets (inputs are always characters)."""

    max_size: int = at_least(1, 50000)
    min_count: int = at_least(1, 3)


@dataclass
class OptimizerConfig:
    name: str = one_of("adam", "adagrad", "sgd", default="adam")
    lr: float = at_least(0.0, 0.002)


@dataclass
class PretrainSettings:
    """The training loop."""

    output_dir: str | None = None  # default: <data folder>/pretrain/run
    max_steps: int = at_least(1, 16000)
    max_minutes: float | None = at_least(0.0, None)
    batch_size: int = at_least(1, 64)  # streams over all processes
    unroll_steps: int = at_least(1, 20)
    n_negative_samples: int = at_least(1, 2048)
    dropout: float = fraction(0.1)
    state_reset_probability: float = probability(0.1)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    lr_schedule: str = one_of("constant", "linear", default="linear")
    warmup_steps: int = at_least(0, 500)
    clip_norm: float = at_least(0.0, 10.0)
    checkpoint_minutes: float = at_least(0.0, 5.0)
    log_every: int = at_least(1, 20)
    eval_every: int | None = at_least(1, 500)  # steps between held-out evaluations
    eval_batch_size: int = at_least(1, 32)
    eval_unroll_steps: int = at_least(1, 20)
    seed: int = 1
    threads: str | None = "auto"  # torch CPU threads per process: a number, or auto
    device: str = "auto"  # auto | cpu | cuda
    # Of the training steps' products: float32, bfloat16 (mixed precision), or auto (bfloat16
    # where the device multiplies it natively)
    precision: str = one_of("auto", "float32", "bfloat16", default="float32")
    # An existing biLM to continue from: {options: PATH, weights: PATH} (checked by `validate`;
    # OmegaConf cannot merge an override into a typed node that is null).
    init_from: Any = None


@dataclass
class WandbConfig:
    project: str | None = None  # set to log to W&B (rank 0)
    mode: str = one_of("online", "offline", "disabled", default="online")


@dataclass
class PretrainConfig:
    """The whole pretraining config (``ner-pretrain --cfg job`` prints it)."""

    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    vocab: VocabConfig = field(default_factory=VocabConfig)
    model: dict[str, Any] = MISSING  # the options.json layout
    pretrain: PretrainSettings = field(default_factory=PretrainSettings)
    wandb: WandbConfig = field(default_factory=WandbConfig)


def validate(cfg: DictConfig) -> None:
    """Check ranges and choices of a composed pretraining config (types Hydra already checked)."""
    check_ranges(cfg, PretrainConfig)
    if cfg.corpus.heldout_per_mille >= 1000:
        raise ConfigError(
            f"corpus.heldout_per_mille={cfg.corpus.heldout_per_mille}: expected a number < 1000"
        )
    init = cfg.pretrain.init_from
    if init is not None and not (
        isinstance(init, DictConfig) and set(init) == {"options", "weights"}
    ):
        raise ConfigError(f"pretrain.init_from={init}: expected {{options: PATH, weights: PATH}}")
    threads = cfg.pretrain.threads
    if threads not in (None, "auto") and not (str(threads).isdigit() and int(threads) > 0):
        raise ConfigError(f"pretrain.threads={threads}: expected a positive number or auto")


ConfigStore.instance().store(name="pretrain_schema", node=PretrainConfig)
