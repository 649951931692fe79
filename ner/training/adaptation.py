"""``elmo.adapt``: the run's biLM continued on the training split's sentences (task) or on those
and ``elmo.adapt_text`` (domain) before its features are computed. Dev and test are never read:
only the training split's sentences are passed on. The adapted biLM comes from the data folder's
cache (`ner.pretrain.adapt`) and replaces the configured one for the whole run, the saved model
included."""

import logging
from collections.abc import Sequence
from typing import Any

from ner.bilm.weights import resolve
from ner.pretrain.adapt import AdaptSettings, adapt_bilm

logger = logging.getLogger(__name__)


def adapt_settings(elmo: dict[str, Any], trainer: dict[str, Any], progress: bool) -> AdaptSettings:
    """The adaptation settings of an ``elmo`` group, on the training run's device and threads,
    with a progress bar when the run shows them."""
    device = str(trainer["device"])
    return AdaptSettings(
        steps=int(elmo["adapt_steps"]),
        progress=progress,
        softmax_warmup_steps=int(elmo["adapt_softmax_steps"]),
        bilm_lr_scale=float(elmo["adapt_lr_scale"]),
        threads=str(trainer["num_threads"]),
        device="cuda" if device.startswith("cuda") else device,
    )


def perplexity_text(perplexity: dict[str, float] | None) -> str:
    """``forward F backward B`` (one decimal), or ``not measured``."""
    if perplexity is None:
        return "not measured"
    return f"forward {perplexity['forward']:.1f} backward {perplexity['backward']:.1f}"


def adapted_elmo(
    elmo: dict[str, Any],
    trainer: dict[str, Any],
    train_sentences: Sequence[Sequence[str]],
    progress: bool = True,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``elmo`` group the run uses and what its adaptation measured: `elmo` itself with
    ``adapt: none``, else a copy whose options and weights are the adapted biLM's."""
    mode = elmo.get("adapt", "none")
    if mode == "none":
        return elmo, None
    base = (
        resolve(elmo["options_file"], desc="ELMo options"),
        resolve(elmo["weight_file"], desc="ELMo weights"),
    )
    texts = list(elmo.get("adapt_text") or []) if mode == "domain" else []
    adapted = adapt_bilm(base, train_sentences, texts, adapt_settings(elmo, trainer, progress))
    logger.info(
        "elmo.adapt=%s: biLM %s; held-out perplexity before %s, after %s",
        *(mode, adapted.weights.parent, perplexity_text(adapted.metadata["perplexity_before"])),
        perplexity_text(adapted.metadata["perplexity_after"]),
    )
    replaced = {**elmo, "options_file": str(adapted.options), "weight_file": str(adapted.weights)}
    return replaced, {"mode": mode, "cache_entry": adapted.weights.parent.name, **adapted.metadata}
