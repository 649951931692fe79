"""Re-evaluating a saved training run on any split of its corpus or of another corpus.

The run's model is scored as ``ner-predict --scores`` scores it: as a `Tagger` (its ``model/``
folder, or a checkpoint restored into the same `Tagger`), through `ner.model.evaluation`, as the
run scored it for results.json. The
scores (seqeval default and strict, per type) are written, with a ``token gold pred``
predictions file, next to the run: ``eval_<corpus>_<split>.{json,txt}``.
"""

import re
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from ner.common.checkpoints import load_checkpoint
from ner.common.errors import InputError, MissingFileError
from ner.common.files import write_json
from ner.common.packed_words import PackedWords
from ner.common.vocabulary import Vocabulary
from ner.embeddings.pretrained import load_pretrained_words
from ner.model.archive import MANIFEST, BiLMFiles, load_archive
from ner.model.saving import pretrained_words_of
from ner.model.tagger import Tagger
from ner.tagger.dataset import Vocabularies
from ner.training.evaluation import score_split
from ner.training.setup import CHECKPOINT_VOCABULARIES, bilm_files, load_splits


def pretrained_words(
    saved: dict[str, Any], config: dict[str, Any]
) -> Vocabulary | PackedWords | None:
    """The words of a checkpoint's frozen GloVe rows (the rows themselves are in the weights),
    rebuilt as training built them from the run's GloVe settings, for a run that stopped before
    it wrote ``model/`` (which keeps them)."""
    expected = saved["model_config"].get("pretrained_words")
    if not expected:
        return None
    glove = config["embeddings"]["glove"]
    words = load_pretrained_words(
        glove["source"],
        Vocabularies.from_saved(saved, CHECKPOINT_VOCABULARIES).words,
        dim=glove["dim"],
        seed=config["seed"],
        member=glove.get("member"),
        sha256=glove.get("sha256"),
    ).extension
    if len(words) != expected:
        raise InputError(
            f"{glove['source']} no longer matches the run: it gives {len(words)} words beyond "
            f"the training vocabulary, the model has {expected}"
        )
    return words


def checkpoint_bilm(saved: dict[str, Any], config: dict[str, Any]) -> BiLMFiles | None:
    """The biLM a checkpoint's run read: the adapted one it records (``elmo.adapt``), else the
    one its config names."""
    if saved.get("bilm"):
        return BiLMFiles(**saved["bilm"])
    return bilm_files(config.get("elmo"))


def run_tagger(
    run_dir: Path, config: dict[str, Any], checkpoint: str = "best", **options: Any
) -> Tagger:
    """The run's model as a `Tagger`: its ``model/`` folder (the best epoch's weights), or the
    `checkpoint`'s weights with the vocabularies and biLM of ``model/`` (of the run's config and
    GloVe file when a stopped run has no ``model/``). `options` go to the `Tagger`."""
    model_dir = run_dir / "model"
    has_model = (model_dir / MANIFEST).is_file()
    if checkpoint == "best" and has_model:
        return Tagger.load(model_dir, **options)
    path = run_dir / "checkpoints" / f"{checkpoint}.pt"
    saved = load_checkpoint(path)
    vocabularies = Vocabularies.from_saved(saved, CHECKPOINT_VOCABULARIES)
    if has_model:  # the checkpoint holds the pretrained vectors: only their words are needed
        archive = load_archive(model_dir)
        words, bilm = pretrained_words_of(archive, vocabularies)[0], archive.bilm
    else:
        words, bilm = pretrained_words(saved, config), checkpoint_bilm(saved, config)
    return Tagger.restore(
        path,
        saved["model_config"],
        saved["model"],
        vocabularies,
        words,
        bilm,
        corpus_scheme=saved.get("corpus_scheme"),
        **options,
    )


def run_data_config(
    data: dict[str, Any],
    corpus: str | None,
    max_sentences: int | None,
    corpus_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The data settings to score with: the run's own (its ``max_sentences`` cap, corpus options
    and training subset, so the run's scores come back) unless `corpus` names another corpus,
    which is read with `corpus_options` (``data.options``; None: the defaults); `max_sentences`,
    when given, replaces the cap."""
    data = dict(data)
    if corpus is not None:
        options = dict(corpus_options or {})
        data.update(name=corpus, options=options, max_sentences=None, train_fraction=1.0)
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
    corpus_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Scores of the run's `checkpoint` on `split` of its own corpus as the run read it (or of
    `corpus`, read with `corpus_options`); `max_sentences` caps the split (default: the run's
    ``data.max_sentences``)."""
    run_dir = Path(run_dir)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise MissingFileError(f"{run_dir} is not a training run: no config.yaml")
    config = OmegaConf.to_container(OmegaConf.load(config_path), resolve=True)
    tagger = run_tagger(run_dir, config, checkpoint, device=device)
    data_config = run_data_config(config["data"], corpus, max_sentences, corpus_options)
    loaded = load_splits(data_config)
    if split not in loaded.splits:
        raise InputError(f"no split {split!r}; choose one of {sorted(loaded.splits)}")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(data_config["name"]).name)
    scores = score_split(
        tagger,
        loaded.splits[split],
        loaded.scheme,
        batch_size=batch_size,
        predictions_file=run_dir / f"eval_{name}_{split}.txt",
    )
    write_json(run_dir / f"eval_{name}_{split}.json", scores, indent=1)
    return scores
