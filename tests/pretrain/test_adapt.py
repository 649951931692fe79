"""Adapting the fixture biLM to a tiny text: the export, the cache and its fingerprint, a damaged
entry rebuilt, a killed adaptation resumed, and bad text refused naming the file."""

import logging
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.pretrain import corpus, sources, trainer
from ner.pretrain.adapt import AdaptSettings, AdaptTextError, adapt_bilm

TINY = AdaptSettings(
    steps=4,
    softmax_warmup_steps=2,
    batch_size=4,
    unroll_steps=5,
    n_negative_samples=16,
    warmup_steps=1,
    heldout_per_mille=100,
    vocab_min_count=1,
    checkpoint_minutes=0.0,  # a checkpoint after every step
    threads=1,
    device="cpu",
    precision="float32",
)


@pytest.fixture
def base(fixture_dir: Path) -> tuple[Path, Path]:
    return fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5"


@pytest.fixture
def task(zipf_text: Path) -> list[list[str]]:
    """The training sentences of task-adaptive pretraining (conftest.py's Zipf text)."""
    return [line.split() for line in zipf_text.read_text().splitlines()]


def weights_of(options: Path, weights: Path) -> dict[str, torch.Tensor]:
    return BiLM.from_files(options, weights, state="stateless").state_dict()


def test_the_adapted_bilm_is_exported_cached_and_differs_from_its_base(
    base, task, tmp_path: Path, caplog
) -> None:
    cache = tmp_path / "cache"
    with caplog.at_level(logging.INFO):
        adapted = adapt_bilm(base, task, settings=TINY, cache_dir=cache)
    assert "fresh one over the adaptation text's vocabulary" in caplog.text
    before, after = weights_of(*base), weights_of(adapted.options, adapted.weights)
    assert before.keys() == after.keys()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert adapted.metadata["steps"] == TINY.softmax_warmup_steps + TINY.steps
    assert adapted.metadata["task_sentences"] == len(task)
    for when in ("before", "after"):  # the softmax warm-up's end, the adaptation's
        assert set(adapted.metadata[f"perplexity_{when}"]) >= {"forward", "backward"}
    assert adapted.metadata["perplexity_before"] != adapted.metadata["perplexity_after"]
    assert [p.name for p in cache.iterdir() if p.is_dir()] == [adapted.weights.parent.name]

    caplog.clear()
    with caplog.at_level(logging.INFO):
        again = adapt_bilm(base, task, settings=replace(TINY, threads=2), cache_dir=cache)
    assert again.weights == adapted.weights  # runtime settings are not in the fingerprint
    assert "adapting the biLM" not in caplog.text


def test_the_fingerprint_follows_the_text_and_the_settings(base, task, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = adapt_bilm(base, task, settings=TINY, cache_dir=cache).weights.parent
    fewer = adapt_bilm(base, task[:-1], settings=TINY, cache_dir=cache).weights.parent
    longer = adapt_bilm(base, task, settings=replace(TINY, steps=5), cache_dir=cache)
    domain = tmp_path / "domain.txt"
    domain.write_text("".join(" ".join(reversed(s)) + "\n" for s in task[:50]))
    with_text = adapt_bilm(base, task, [domain], settings=TINY, cache_dir=cache)
    slower = adapt_bilm(base, task, settings=replace(TINY, bilm_lr_scale=0.1), cache_dir=cache)
    folders = {first, fewer, longer.weights.parent, with_text.weights.parent}
    assert len(folders | {slower.weights.parent}) == 5
    assert with_text.metadata["texts"] == [str(domain)]


def test_a_damaged_entry_is_rebuilt_not_used(base, task, tmp_path: Path, caplog) -> None:
    cache = tmp_path / "cache"
    adapted = adapt_bilm(base, task, settings=TINY, cache_dir=cache)
    good = adapted.weights.read_bytes()
    damaged = bytearray(good)
    damaged[len(good) // 2] ^= 0xFF
    adapted.weights.write_bytes(bytes(damaged))
    with caplog.at_level(logging.INFO):
        rebuilt = adapt_bilm(base, task, settings=TINY, cache_dir=cache)
    assert "damaged adapted biLM" in caplog.text
    assert "adapting the biLM" in caplog.text
    assert rebuilt.weights.read_bytes() == good  # the same adaptation, run again


def test_a_killed_adaptation_resumes_from_its_checkpoint(
    base, task, tmp_path: Path, monkeypatch, caplog
) -> None:
    whole = adapt_bilm(base, task, settings=TINY, cache_dir=tmp_path / "whole")
    step = trainer.PretrainingRun.step

    def killed_after_three(run, network, batch):  # after the softmax warm-up's evaluation
        if run.position["step"] == 3:
            raise KeyboardInterrupt
        return step(run, network, batch)

    monkeypatch.setattr(trainer.PretrainingRun, "step", killed_after_three)
    with pytest.raises(KeyboardInterrupt):
        adapt_bilm(base, task, settings=TINY, cache_dir=tmp_path / "killed")
    monkeypatch.setattr(trainer.PretrainingRun, "step", step)
    with caplog.at_level(logging.INFO):
        resumed = adapt_bilm(base, task, settings=TINY, cache_dir=tmp_path / "killed")
    assert "at step 3" in caplog.text
    assert resumed.weights.read_bytes() == whole.weights.read_bytes()
    assert resumed.metadata["perplexity_before"] == whole.metadata["perplexity_before"]
    assert not list((tmp_path / "killed").glob("*.work"))  # removed once the entry is built


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no sentences"),
        (b"\n  \n", "no sentences"),
        (b"PK\x03\x04\x00\x00\x08\x00 binary\n", "NUL bytes"),
        ("caf\u00e9 au lait\n".encode("latin-1"), "not UTF-8"),
    ],
)
def test_bad_adaptation_text_is_one_line_naming_the_file(
    base, task, tmp_path: Path, content: bytes, message: str
) -> None:
    text = tmp_path / "domain.txt"
    text.write_bytes(content)
    with pytest.raises(AdaptTextError) as error:
        adapt_bilm(base, task, [text], settings=TINY, cache_dir=tmp_path / "cache")
    assert str(text) in str(error.value) and message in str(error.value)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "cache").exists()  # refused before anything is built


def test_a_missing_adaptation_text_is_named(base, task, tmp_path: Path) -> None:
    with pytest.raises(AdaptTextError, match=r"adaptation text .*absent\.txt: No such file"):
        adapt_bilm(base, task, [tmp_path / "absent.txt"], settings=TINY, cache_dir=tmp_path)


def test_a_named_source_is_prepared_once_without_evaluation_text_and_adapted_on(
    base, task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = ["The", "test", "sentence", "."]
    domain = [["Shares", "rose", "in", "Tokyo", "."], held] * 30
    monkeypatch.setitem(sources.SOURCES, "tiny_news", lambda: iter(domain))
    monkeypatch.setattr(sources, "evaluation_sentences", lambda: frozenset([tuple(held)]))
    monkeypatch.setattr(corpus, "cache_path", lambda name: tmp_path / f"{name}.txt")
    adapted = adapt_bilm(base, task, ["tiny_news"], settings=TINY, cache_dir=tmp_path / "cache")
    prepared = tmp_path / "tiny_news.txt"
    assert prepared.read_text().splitlines() == ["Shares rose in Tokyo ."] * 30
    assert adapted.metadata["texts"] == [str(prepared)]
    task_only = adapt_bilm(base, task, settings=TINY, cache_dir=tmp_path / "cache")
    assert task_only.weights.parent != adapted.weights.parent
    with pytest.raises(AdaptTextError, match=r"adaptation text .*tiny_newz: No such file"):
        adapt_bilm(base, task, ["tiny_newz"], settings=TINY, cache_dir=tmp_path / "cache")


def test_text_too_short_to_adapt_on_is_refused(base, tmp_path: Path) -> None:
    with pytest.raises(AdaptTextError, match="too short"):
        adapt_bilm(base, [["a", "b"]], settings=TINY, cache_dir=tmp_path)
