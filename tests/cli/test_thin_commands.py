"""The console entry points stay thin: parse the command line, call the library, print. A module
of `ner/cli/` that grows past this size has taken on reading, scoring or writing of its own,
which belongs in the library."""

from pathlib import Path

import pytest

import ner.cli

LIMIT = 130  # lines, the argument definitions included; most commands are under 110
COMMANDS = sorted(Path(ner.cli.__file__).parent.glob("*.py"))


@pytest.mark.parametrize("module", COMMANDS, ids=lambda module: module.name)
def test_every_command_module_is_short(module: Path):
    lines = len(module.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{module.name}: {lines} lines"
