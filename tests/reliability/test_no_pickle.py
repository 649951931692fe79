"""No code path unpickles a file a user can hand us: every torch.load in the repository passes
weights_only=True, and checkpoints holding arbitrary objects are refused."""

import re
import subprocess

import pytest
import torch

from ner.common.checkpoints import CheckpointError, load_checkpoint
from ner.common.paths import PROJECT_ROOT

UNSAFE = ("pickle.load", "pickle.loads", "dill.load", "joblib.load", "np.load(", "numpy.load(")


def python_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [name for name in listed if (PROJECT_ROOT / name).is_file()]


def call_text(text: str, start: int) -> str:
    """The source of the call that opens at `start` (up to its matching parenthesis)."""
    depth = 0
    for end in range(text.index("(", start), len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start : end + 1]
    return text[start:]


def test_every_torch_load_is_weights_only():
    offenders = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}"
        for name in python_files()
        for text in [(PROJECT_ROOT / name).read_text(encoding="utf-8")]
        for match in re.finditer(r"torch\.load\(", text)
        if "weights_only=True" not in call_text(text, match.start())
    ]
    assert not offenders, f"torch.load without weights_only=True: {offenders}"


def test_no_other_unpickling_reader():
    offenders = [
        f"{name}: {pattern}"
        for name in python_files()
        if name != "tests/reliability/test_no_pickle.py"
        for pattern in UNSAFE
        if pattern in (PROJECT_ROOT / name).read_text(encoding="utf-8")
        and not (pattern.startswith(("np.load(", "numpy.load(")) and _numpy_loads_are_safe(name))
    ]
    assert not offenders, offenders


def _numpy_loads_are_safe(name: str) -> bool:
    """np.load refuses pickles unless allow_pickle=True is passed."""
    return "allow_pickle=True" not in (PROJECT_ROOT / name).read_text(encoding="utf-8")


class Payload:
    """Unpickling this would run code; weights_only refuses to build it."""

    def __reduce__(self):
        return (print, ("this must never run",))


def test_a_checkpoint_with_an_object_is_refused(tmp_path, capsys):
    path = tmp_path / "crafted.pt"
    torch.save({"model": {}, "payload": Payload()}, path)
    with pytest.raises(CheckpointError, match=r"crafted\.pt is not a readable checkpoint"):
        load_checkpoint(path)
    assert "this must never run" not in capsys.readouterr().out
