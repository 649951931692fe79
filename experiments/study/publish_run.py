"""Copy a finished training run's summary into the repository: ``results.json`` (with the biLM
weights' sha256 recorded and paths inside the checkout made relative to it, so the file names no
machine's folders) and ``predictions_test.txt`` (for the paired significance test).

    .venv/bin/python experiments/study/publish_run.py RUN_DIR TARGET_DIR
"""

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ner.reporting.runs import BILM_SHA256, Run, bilm_weights_sha256

ROOT = Path(__file__).resolve().parents[2]


def relative(value: Any, root: str) -> Any:
    """`value` with every string that starts with `root` made relative to it, recursively."""
    if isinstance(value, dict):
        return {key: relative(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [relative(item, root) for item in value]
    if isinstance(value, str) and value.startswith(root):
        return value[len(root) :]
    return value


def publish(run_dir: Path, target: Path) -> None:
    """Write the portable summary of `run_dir` into `target`."""
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    run = Run(run_dir, "", "", results["seed"], results)
    results[BILM_SHA256] = bilm_weights_sha256(run)  # which weights ran, if any
    target.mkdir(parents=True, exist_ok=True)
    portable = relative(results, str(ROOT) + "/")
    (target / "results.json").write_text(json.dumps(portable, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(run_dir / "predictions_test.txt", target / "predictions_test.txt")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    publish(Path(sys.argv[1]), Path(sys.argv[2]))
