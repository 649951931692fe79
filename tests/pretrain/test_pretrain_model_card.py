"""The model card of a shipped biLM (experiments/pretrain/model_card.py) is written from a real,
tiny pretraining run: files copied, every figure read from the run."""

import importlib.util
import json
from pathlib import Path

import pytest

from ner.common.paths import PRETRAINED_DIR, PROJECT_ROOT
from ner.pretrain.trainer import train

SCRIPT = PROJECT_ROOT / "experiments" / "pretrain" / "model_card.py"
spec = importlib.util.spec_from_file_location("model_card", SCRIPT)
model_card = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model_card)


def test_the_card_reports_the_runs_own_figures(tiny_config, tmp_path: Path) -> None:
    run = tmp_path / "run"
    metrics = train(tiny_config("pretrain.max_steps=4", output_dir=run))
    target = tmp_path / "shipped"
    note = tmp_path / "note.md"
    note.write_text("The schedule changed at step 2.\n")
    model_card.main([str(run), str(target), "--name", "tiny-test", "--note", str(note)])
    assert sorted(p.name for p in target.iterdir()) == [
        "MODEL_CARD.md", "options.json", "vocab.txt", "weights.hdf5",
    ]  # fmt: skip
    assert (target / "weights.hdf5").read_bytes() == (run / "weights.hdf5").read_bytes()
    card = (target / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert card.startswith("# tiny-test\n")
    assert f"**{metrics['perplexity']['forward']:.1f}**" in card
    assert f"**{metrics['perplexity']['backward']:.1f}**" in card
    assert f"{metrics['steps']:,} × batch 4 streams × 5 steps" in card
    assert "The schedule changed at step 2.\n" in card
    # the precision the run used (the default, auto, depends on the machine) is pinned
    pinned = f"pretrain.precision={metrics['precision']}"
    assert f"{model_card.COMMAND} {pinned}\n" in card and f"products (`{pinned}`)" in card
    assert json.loads((target / "options.json").read_text()) == json.loads(
        (run / "options.json").read_text()
    )


@pytest.mark.parametrize("inside", ["elmo-small-news", "new-bilm", "."])
def test_it_refuses_to_write_into_the_installed_package(inside: str, tmp_path: Path, capsys):
    """The shipped taggers pin the digests of the biLM in ner/pretrained/: the script never writes
    there, and refuses before it reads the run (here a folder without one)."""
    before = {p: p.stat().st_mtime_ns for p in PRETRAINED_DIR.rglob("*")}
    with pytest.raises(SystemExit) as stop:
        model_card.main([str(tmp_path / "run"), str(PRETRAINED_DIR / inside)])
    assert stop.value.code == 2
    assert "inside the installed package" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in PRETRAINED_DIR.rglob("*")} == before


def test_the_output_folder_is_required() -> None:
    with pytest.raises(SystemExit) as stop:
        model_card.main(["some-run"])
    assert stop.value.code == 2
