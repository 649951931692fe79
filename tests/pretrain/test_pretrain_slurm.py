"""Data-parallel pretraining as a SLURM job (scripts/slurm_pretrain.sbatch, torchrun through
srun with a c10d rendezvous) on the test cluster exports the same biLM as
``torchrun --standalone`` with the same seed, steps and number of processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
SETTINGS = ["pretrain.max_steps=6", "pretrain.batch_size=8"]


def weights(run: Path) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    with h5py.File(run / "weights.hdf5") as handle:
        handle.visititems(
            lambda name, obj: (
                arrays.setdefault(name, obj[()]) if isinstance(obj, h5py.Dataset) else None
            )
        )
    return arrays


@pytest.mark.slurm
@pytest.mark.slow
def test_two_processes_through_slurm_export_the_standalone_run_s_bilm(
    slurm_cluster, tiny_overrides, tmp_path: Path
) -> None:
    standalone, cluster = tmp_path / "standalone", tmp_path / "slurm"
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"),
        *("-m", "ner.cli.pretrain", *tiny_overrides(*SETTINGS, output_dir=standalone)),
    ]
    result = subprocess.run(command, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    job = [
        "sbatch", "--wait", "--nodes=1", "--cpus-per-task=2", "--mem=2G", "--time=10",
        f"--output={tmp_path / 'job.out'}", str(REPO / "scripts" / "slurm_pretrain.sbatch"),
        *tiny_overrides(*SETTINGS, output_dir=cluster),
    ]  # fmt: skip
    env = {**ENV, "NPROC_PER_NODE": "2", "PYTHON": sys.executable}
    result = subprocess.run(job, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    log = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert result.returncode == 0, result.stderr[-2000:] + log[-3000:]
    expected, observed = weights(standalone), weights(cluster)
    assert observed.keys() == expected.keys()
    for name, array in expected.items():
        np.testing.assert_array_equal(observed[name], array, err_msg=name)
    metrics = [json.loads((run / "metrics.json").read_text()) for run in (standalone, cluster)]
    assert metrics[0]["perplexity"] == metrics[1]["perplexity"]
