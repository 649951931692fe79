"""No function in the package is longer than `MAX_LINES` lines, so that every one reads on one
screen and a long job reads as a short sequence of named steps.

How it measures: every ``.py`` file under ``ner/``, ``conf/`` and ``hydra_plugins/`` is parsed
with `ast`; each function and method (nested ones too, each counted on its own and inside its
parent) is ``end_lineno - lineno + 1`` lines long, from its ``def`` line to its last line, with
its docstring, comments and blank lines inside but its decorators outside.
"""

import ast
from pathlib import Path

import ner

ROOT = Path(ner.__file__).parent.parent
FOLDERS = ("ner", "conf", "hydra_plugins")
MAX_LINES = 80


def function_lengths(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """(``file:line name``, lines) of every function and method in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (f"{path.relative_to(root)}:{node.lineno} {node.name}", node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def modules() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def test_the_measure_sees_the_package():
    lengths = [length for path in modules() for _, length in function_lengths(path)]
    assert len(lengths) > 500 and max(lengths) > 40


def test_the_measure_counts_def_to_last_line(tmp_path):
    module = tmp_path / "example.py"
    module.write_text(
        "@decorator\ndef outer():\n    '''Doc.'''\n\n    def inner():\n        return 1\n"
        "    return inner\n",
        encoding="utf-8",
    )
    found = function_lengths(module, root=tmp_path)
    assert found == [("example.py:2 outer", 6), ("example.py:5 inner", 2)]


def test_no_function_is_longer_than_the_limit():
    too_long = [
        f"{name}: {length} lines"
        for path in modules()
        for name, length in function_lengths(path)
        if length > MAX_LINES
    ]
    assert not too_long, (
        f"functions longer than {MAX_LINES} lines (split them into named steps):\n"
        + "\n".join(too_long)
    )
