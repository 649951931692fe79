"""Re-evaluating a saved training run on any split of its corpus or of another corpus.

The scores (seqeval default and strict, per type) are written, with a ``token gold pred``
predictions file, next to the run: ``eval_<corpus>_<split>.{json,txt}``.
"""

import logging
import re
from pathlib import Path
from typing import Any

import torch
from omegaconf import OmegaConf

from ner.common.checkpoints import load_checkpoint
from ner.common.errors import InputError, MissingFileError
from ner.common.files import write_json
from ner.data.labels import TOKENS
from ner.embeddings.pretrained import load_pretrained_words
from ner.features.elmo import ElmoFeatures
from ner.tagger.dataset import Encoder, entity_types
from ner.tagger.model import TaggerModel
from ner.training.evaluation import evaluate_split
from ner.training.setup import encode_split, load_splits

logger = logging.getLogger(__name__)


def run_encoder(saved: dict[str, Any], config: dict[str, Any]) -> Encoder:
    """The encoder of a training run from its checkpoint and resolved config. The words of the
    run's frozen GloVe rows (the rows themselves are in the weights) are rebuilt as training
    built them, so that words outside train are looked up as in the training run."""
    encoder = Encoder.from_json(saved["encoder"])
    expected = saved["model_config"].get("pretrained_words")
    if expected:
        glove = config["embeddings"]["glove"]
        encoder.pretrained = load_pretrained_words(
            glove["source"],
            encoder.words,
            dim=glove["dim"],
            seed=config["seed"],
            member=glove.get("member"),
            sha256=glove.get("sha256"),
        ).extension
        if len(encoder.pretrained) != expected:
            raise InputError(
                f"{glove['source']} no longer matches the run: it gives "
                f"{len(encoder.pretrained)} words beyond the training vocabulary, the model has "
                f"{expected}"
            )
    return encoder


def run_data_config(
    data: dict[str, Any], corpus: str | None, max_sentences: int | None
) -> dict[str, Any]:
    """The data settings to score with: the run's own (its ``max_sentences`` cap, corpus options
    and training subset, so the run's scores come back) unless `corpus` names another corpus,
    which is read with the defaults; `max_sentences`, when given, replaces the cap."""
    data = dict(data)
    if corpus is not None:
        data.update(name=corpus, options={}, max_sentences=None, train_fraction=1.0)
    if max_sentences is not None:
        data["max_sentences"] = max_sentences
    return data


def evaluate_run(
    run_dir: Path,
    *,
    split: str = "test",
    corpus: str | None = None,
    checkpoint: str = "best",
    max_sentences: int | None = None,
    batch_size: int = 256,
    device: str = "cpu",
) -> dict[str, Any]:
    """Scores of the run's `checkpoint` on `split` of its own corpus as the run read it (or of
    `corpus`); `max_sentences` caps the split (default: the run's ``data.max_sentences``)."""
    run_dir = Path(run_dir)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise MissingFileError(f"{run_dir} is not a training run: no config.yaml")
    config = OmegaConf.to_container(OmegaConf.load(config_path), resolve=True)
    saved = load_checkpoint(run_dir / "checkpoints" / f"{checkpoint}.pt")
    model = TaggerModel(**saved["model_config"])
    model.load_state_dict(saved["model"])
    model.to(device)
    encoder = run_encoder(saved, config)
    data_config = run_data_config(config["data"], corpus, max_sentences)
    loaded = load_splits(data_config)
    if split not in loaded.splits:
        raise InputError(f"no split {split!r}; choose one of {sorted(loaded.splits)}")
    chosen = loaded.splits[split]
    if loaded.scheme == TOKENS:  # per-token labels: the labels themselves
        unknown = {tag for tags in chosen.tags for tag in tags} - set(model.tags)
    else:
        unknown = entity_types(chosen.tags) - {t.split("-", 1)[-1] for t in model.tags}
    if unknown:
        logger.warning("%s has types the model never predicts: %s", split, sorted(unknown))
    elmo = None
    if model.elmo_mix is not None:
        elmo = ElmoFeatures(
            config["elmo"],
            # Runs from before the elmo group held every biLM setting have no elmo.cache; the
            # cache was on by default then too.
            cache=config["elmo"].get("cache", True),
            device=torch.device(device),
            progress=False,
        )
    encoded = encode_split(
        chosen, encoder, loaded.scheme, saved["model_config"]["tag_scheme"], elmo, with_tags=False
    )
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(data_config["name"]).name)
    scores = evaluate_split(
        model,
        chosen,
        encoded.examples,
        encoded.make_batch,
        corpus_scheme=loaded.scheme,
        model_scheme=saved["model_config"]["tag_scheme"],
        batch_size=batch_size,
        device=torch.device(device),
        predictions_file=run_dir / f"eval_{name}_{split}.txt",
    )
    write_json(run_dir / f"eval_{name}_{split}.json", scores)
    return scores
