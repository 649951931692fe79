"""The pretraining config's schema: typed dataclasses for ``conf/pretrain.yaml``.

Hydra merges the YAML file and the command line into `PretrainConfig` (registered as
``pretrain_schema``), so a wrong type or a misspelt key fails while the config is composed;
`validate` checks ranges and choices before any corpus is read. The ``model`` block keeps the
options.json layout and is checked by `ner.bilm.options.BiLMOptions`.
"""

import logging
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from ner.common.schema import ConfigError, at_least, check_ranges, fraction, one_of, probability

logger = logging.getLogger(__name__)

# What the deprecated `pretrain.optimizer.name` chose, as `_target_` configs (the learning rate
# comes from `pretrain.optimizer.lr`; bilm-tf's Adagrad starts its accumulator at 1.0).
NAMED_OPTIMIZERS: dict[str, dict[str, Any]] = {
    "adam": {"_target_": "torch.optim.Adam", "fused": True},
    "adagrad": {"_target_": "torch.optim.Adagrad", "initial_accumulator_value": 1.0},
    "sgd": {"_target_": "torch.optim.SGD"},
}


WANDB_MODES = ("online", "offline", "disabled")
# Where the groups of conf/pretrain.yaml are: on its search path (hydra.searchpath) alone, so that
# ner-train does not list them.
GROUPS = "pkg://ner.pretrain.conf"


@dataclass
class CorpusConfig:
    """The training text: named sources (`ner.pretrain.sources`, fetched from their public URLs;
    ``NER_NLTK_DATA_URL`` and ``NER_REUTERS_URL`` override the base) and/or paths of text files
    with one tokenized sentence per line."""

    sources: list[str] = MISSING
    heldout_per_mille: int = at_least(0, 5)  # CRC-32(text) % 1000 < this: held out
    max_sentence_tokens: int = at_least(1, 400)  # longer lines in text files are an error;
    # named sources cut them


@dataclass
class VocabConfig:
    """The softmax targets (inputs are always characters): the most frequent words."""

    max_size: int = at_least(1, 50000)
    min_count: int = at_least(1, 3)


@dataclass
class OptimizerConfig:
    """A torch optimizer, built for the biLM's parameters with Hydra's ``_target_`` (as
    ``trainer.optimizer`` is for the tagger); a null argument keeps the optimizer's default, and
    ``+pretrain.optimizer.KEY=VALUE`` passes one the schema does not name."""

    _target_: str = "torch.optim.Adam"
    _partial_: bool = True
    lr: float = at_least(0.0, 0.002)
    # One kernel for the whole update (Adam, Adagrad, SGD; null: torch's default). bilm-tf's
    # optimizer: _target_=torch.optim.Adagrad, lr=0.2, fused=null,
    # +initial_accumulator_value=1.0.
    fused: bool | None = True
    # Deprecated: one of the presets in `NAMED_OPTIMIZERS`, which then replaces `_target_`.
    name: str | None = one_of(*NAMED_OPTIMIZERS, default=None)


@dataclass
class PretrainSettings:
    """The training loop."""

    output_dir: str | None = None  # default: <data folder>/pretrain/run; a checkpoint.pt resumes
    max_steps: int = at_least(1, 16000)
    max_minutes: float | None = at_least(0.0, None)  # also stop (checkpoint, export) after this
    batch_size: int = at_least(1, 64)  # streams over all processes (each gets batch_size / W)
    unroll_steps: int = at_least(1, 20)  # truncated BPTT window; the state carries across
    n_negative_samples: int = at_least(1, 2048)  # sampled softmax candidates per batch
    dropout: float = fraction(0.1)  # on every LSTM input and on the top output (bilm-tf)
    # Per stream and batch: restart from a zero state (docs/pretraining.md).
    state_reset_probability: float = probability(0.1)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    lr_schedule: str = one_of("constant", "linear", default="linear")  # linear: to 0 at max_steps
    warmup_steps: int = at_least(0, 500)
    # Steps at the start during which only the softmax learns (the biLM's learning rate is 0): a
    # fresh softmax on a pretrained biLM (continuing with `init_from`) learns before its random
    # gradients reach the biLM; the held-out perplexity at its end is the biLM's before training.
    softmax_warmup_steps: int = at_least(0, 0)
    # The biLM's learning rate as a fraction of `optimizer.lr` (the softmax keeps all of it):
    # continuing a pretrained biLM on little text, a smaller step keeps more of what it knew.
    bilm_lr_scale: float = at_least(0.0, 1.0)
    clip_norm: float = at_least(0.0, 10.0)  # global gradient norm
    checkpoint_minutes: float = at_least(0.0, 5.0)
    log_every: int = at_least(1, 20)
    progress: bool = True  # a tqdm bar of the steps (rank 0)
    eval_every: int | None = at_least(1, 500)  # steps between held-out evaluations
    eval_batch_size: int = at_least(1, 32)
    eval_unroll_steps: int = at_least(1, 20)
    seed: int = 1
    threads: str | None = "auto"  # torch CPU threads per process: a number, or auto
    device: str = "auto"  # auto | cpu | cuda
    # Of the training steps' products: float32, bfloat16 (mixed precision), or auto (bfloat16
    # where the device multiplies it natively)
    precision: str = one_of("auto", "float32", "bfloat16", default="auto")
    # An existing biLM to continue from: {options: PATH, weights: PATH} (checked by `validate`;
    # OmegaConf cannot merge an override into a typed node that is null).
    init_from: Any = None


@dataclass
class WandbConfig:
    """W&B logging of rank 0 into the output folder, once `project` is set; offline by default
    (as ``ner-train``), online or disabled (the ``wandb`` group's options set `mode`)."""

    project: str | None = None
    mode: str = one_of(*WANDB_MODES, default="offline")


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


def preset_overrides(preset: dict[str, Any]) -> list[str]:
    """The command-line overrides of the default config that build `preset`."""
    overrides = [f"pretrain.optimizer._target_={preset['_target_']}"]
    if "fused" not in preset:
        overrides.append("pretrain.optimizer.fused=null")
    overrides += [
        f"+pretrain.optimizer.{key}={value}"
        for key, value in preset.items()
        if key not in ("_target_", "fused")
    ]
    return overrides


def optimizer_config(node: DictConfig) -> dict[str, Any]:
    """`pretrain.optimizer` as Hydra instantiates it: ``_target_``, ``_partial_`` and the
    arguments that are not null. The deprecated ``name`` still picks its preset (with its own
    arguments and `lr`), and a warning names the ``_target_`` to set instead."""
    config = OmegaConf.to_container(node, resolve=True)
    name = config.pop("name", None)
    if name is not None:
        preset = NAMED_OPTIMIZERS[name]
        logger.warning(
            "pretrain.optimizer.name=%s is deprecated: set %s instead",
            *(name, " ".join(preset_overrides(preset))),
        )
        config = {"_partial_": True, "lr": config["lr"], **preset}
    return {key: value for key, value in config.items() if value is not None}


ConfigStore.instance().store(name="pretrain_schema", node=PretrainConfig)
