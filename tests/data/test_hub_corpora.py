"""Hub datasets: a local dataset folder goes through the real `datasets.load_dataset` path; the
hub itself is only reachable for users, so here it is tested as configuration (offline)."""

import os
import subprocess
import sys

import datasets
import pytest

from ner.data import load_corpus, prepare_corpus
from ner.data.columns import ColumnFormatError

HUB_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def write_hub_folder(folder, rows: dict[str, dict]):
    """A dataset folder laid out like a hub repository (one parquet file per split)."""
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "pos_tags": datasets.Sequence(datasets.ClassLabel(names=["NN", "VB"])),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=HUB_LABELS)),
        }
    )
    folder.mkdir()
    for split, columns in rows.items():
        datasets.Dataset.from_dict(columns, features=features).to_parquet(
            folder / f"{split}.parquet"
        )
    return folder


def split(tokens, tags, pos=None):
    return {
        "id": ["0"],
        "tokens": [tokens],
        "pos_tags": [pos or [0] * len(tokens)],
        "ner_tags": [tags],
    }


@pytest.fixture
def hub_folder(tmp_path):
    return write_hub_folder(
        tmp_path / "hub",
        {
            "train": split(["John", "Smith", "runs"], [1, 2, 0], [0, 0, 1]),
            "validation": split(["Paris"], [3]),
            "test": split(["Rome", "sleeps"], [3, 0]),
        },
    )


def test_local_hub_layout(hub_folder, isolated_data_dir):
    corpus, info = prepare_corpus(f"hub:{hub_folder}", tag_scheme="bioes")
    assert info.source_scheme == "iob2" and info.sentences == {
        "train": 1,
        "validation": 1,
        "test": 1,
    }
    train = corpus["train"]
    assert set(train.column_names) == {"tokens", "tags", "pos_tags", "document_id"}
    assert train["pos_tags"] == [["NN", "NN", "VB"]]  # ClassLabel ids kept as their names
    tags = train.features["tags"].feature
    assert tags.int2str(train["tags"][0]) == ["B-PER", "E-PER", "O"]


def test_hub_tag_errors_name_split_and_row(tmp_path, isolated_data_dir):
    folder = write_hub_folder(
        tmp_path / "bad",
        {
            "train": split(["a", "b"], [1, 0]),
            "validation": split(["e"], [0]),
            "test": split(["c", "d"], [0, 4]),
        },
    )
    with pytest.raises(ColumnFormatError, match=r"hub:.*bad test row:0: tag 'I-LOC' after 'O'"):
        load_corpus(f"hub:{folder}")


def test_hub_without_validation_split(tmp_path, isolated_data_dir):
    folder = write_hub_folder(
        tmp_path / "two",
        {"train": split(["a", "b"], [1, 0]), "test": split(["c"], [3])},
    )
    with pytest.raises(ValueError, match=r"no validation split .*holdout=0.1"):
        load_corpus(f"hub:{folder}")
    with pytest.raises(ValueError, match="1 train sentences are too few to carve"):
        load_corpus(f"hub:{folder}", validation_fraction=0.5)


def test_remote_hub_needs_a_revision():
    with pytest.raises(ValueError, match="needs a pinned revision="):
        load_corpus("hub:eriktks/conll2003")


def test_remote_hub_from_config_offline(tmp_path):
    """A Hydra-style config reaches `datasets.load_dataset`; offline, the error names it."""
    script = (
        "from omegaconf import OmegaConf\n"
        "from ner.data import load_corpus\n"
        'cfg = OmegaConf.create(\'{name_or_path: "hub:eriktks/conll2003", revision: 1a2b3c,'
        " tag_column: ner_tags, tag_scheme: bioes}')\n"
        "load_corpus(**cfg)\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "NER_DATA_DIR": str(tmp_path / "data"),
    }
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "could not load hub:eriktks/conll2003@1a2b3c" in result.stderr
    assert "offline?" in result.stderr
