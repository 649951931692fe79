"""The pretraining curve script (experiments/pretrain/perplexity_curve.py): its rows, and the
shipped biLM's reference lines read from its card."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "experiments" / "pretrain" / "perplexity_curve.py"
spec = importlib.util.spec_from_file_location("perplexity_curve", SCRIPT)
perplexity_curve = importlib.util.module_from_spec(spec)
sys.modules["perplexity_curve"] = perplexity_curve
spec.loader.exec_module(perplexity_curve)


def test_the_reference_is_what_the_shipped_card_states(tmp_path: Path) -> None:
    found = perplexity_curve.shipped_perplexity()
    assert set(found) == {"forward", "backward"} and all(v > 1 for v in found.values())
    card = tmp_path / "MODEL_CARD.md"
    card.write_text("| direction | perplexity |\n|---|---|\n| forward | **80.8** |\n")
    with pytest.raises(SystemExit, match="no forward and backward"):
        perplexity_curve.shipped_perplexity(card)
    card.write_text(card.read_text() + "| backward | **84.0** |\n")
    assert perplexity_curve.shipped_perplexity(card) == {"forward": 80.8, "backward": 84.0}


def test_rows_in_step_order_with_the_last_of_a_repeated_step_and_the_final_metrics(
    tmp_path: Path,
) -> None:
    rows = [(1000, 64, 300.0, 310.0), (500, 32, 400.0, 410.0), (1000, 64, 290.0, 305.0)]
    (tmp_path / "heldout.jsonl").write_text(
        "".join(
            json.dumps(
                {"step": s, "tokens_seen": t, "heldout_forward_ppl": f, "heldout_backward_ppl": b}
            )
            + "\n"
            for s, t, f, b in rows
        )
    )
    final = {"steps": 1500, "tokens_seen": 96, "perplexity": {"forward": 250.0, "backward": 260.0}}
    (tmp_path / "metrics.json").write_text(json.dumps(final))
    assert perplexity_curve.curve(tmp_path) == [
        (32, 400.0, 410.0),
        (64, 290.0, 305.0),
        (96, 250.0, 260.0),
    ]
