"""`ner-models export` as a user runs it (the console script, from another folder): it scores the
copy on the run's own data options, exports char-only runs, never deletes a folder it should not
replace, and leaves the target as it was when the export fails."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_tagger import SENTENCES, one_thread, train_tagger

from ner.model.tagger import Tagger

BIN = Path(sys.executable).parent
CHAR = {"dim": 4, "filters": 8, "width": 3, "max_chars": 50}


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    with one_thread():
        return train_tagger()


def write_corpus(folder: Path) -> Path:
    """The tiny tagger's sentences as train/dev/test column files: ``token TAG X``, so that the
    tags are found only with the run's option ``columns=[tokens, tags, _]``."""
    folder.mkdir(parents=True)
    text = "".join(
        "".join(
            f"{token} {tag} X\n" for token, tag in zip(tokens.split(), tags.split(), strict=True)
        )
        + "\n"
        for tokens, tags in SENTENCES
    )
    for split in ("train", "dev", "test"):
        (folder / f"{split}.txt").write_text(text)
    return folder


def write_run(tmp_path: Path, tagger: Tagger, **config) -> Path:
    """A run folder whose ``model/`` is the tiny tagger, trained (says its config) on a corpus
    folder read with the option ``columns``."""
    corpus = write_corpus(tmp_path / "corpus")
    data = {"name": str(corpus), "options": {"columns": ["tokens", "tags", "_"], "holdout": None}}
    with one_thread():
        tagger.save(tmp_path / "run" / "model", config={"data": data, **config})
    return tmp_path / "run" / "model"


def ner_models(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NER_DATA_DIR": str(cwd / "data")}
    return subprocess.run(
        [str(BIN / "ner-models"), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def test_the_card_is_scored_with_the_runs_data_options(tmp_path: Path, tagger: Tagger) -> None:
    write_run(tmp_path, tagger)
    done = ner_models(tmp_path, "export", "run/model", "copy")
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "copy" / "card.json").read_text())
    assert card["corpus_options"] == {"columns": ["tokens", "tags", "_"]}
    assert card["scores"]["test"]["f1"] == 100.0 and card["labels"] == ["LOC", "PER"]
    assert "test 100.00" in done.stdout


def test_a_run_without_glove_exports(tmp_path: Path, tagger: Tagger) -> None:
    write_run(tmp_path, tagger, embeddings={"glove": None, "char": CHAR, "elmo": None})
    done = ner_models(tmp_path, "export", "run/model", "copy")
    assert done.returncode == 0, done.stderr
    assert Tagger.load(tmp_path / "copy").predict("Anna likes Rome .")[0].entities


def test_folders_export_must_not_replace_are_refused_and_kept(
    tmp_path: Path, tagger: Tagger
) -> None:
    write_run(tmp_path, tagger)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    (tmp_path / "file.txt").write_text("keep me too")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for target, expected in [
        (["notes"], "not an earlier export"),  # --force would replace it
        (["run", "--force"], "holds the model being exported"),
        (["file.txt", "--force"], "not a folder"),
        (["run/model/copy", "--force"], "lies inside the model being exported"),
    ]:
        done = ner_models(tmp_path, "export", "run/model", *target)
        assert done.returncode == 2 and expected in done.stderr, (target, done.stderr)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_force_replaces_a_folder_and_a_failed_export_changes_nothing(
    tmp_path: Path, tagger: Tagger
) -> None:
    write_run(tmp_path, tagger)
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "old.txt").write_text("replace me")
    (tmp_path / "copy" / "MODEL_CARD.md").write_text("# prose\n")
    assert ner_models(tmp_path, "export", "run/model", "copy", "--force").returncode == 0
    copy = tmp_path / "copy"
    assert sorted(p.name for p in copy.iterdir() if p.is_file()) == [
        "MODEL_CARD.md", "archive.json", "card.json", "config.json", "weights.safetensors"
    ]  # fmt: skip
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    done = ner_models(tmp_path, "export", "run/model", "copy", "--corpus", "no-such-corpus")
    assert done.returncode == 2 and "no-such-corpus" in done.stderr
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "corpus", "data", "run"]
