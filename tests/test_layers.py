"""The package's imports run one way: entry points → training/serving → model →
tagger/features/pretrain → bilm/data/embeddings → common. A module may import its own package or
any lower layer, never a higher one, so the folder names draw the architecture."""

import ast
from pathlib import Path

import ner

PACKAGE = Path(ner.__file__).parent
CONF = PACKAGE.parent / "conf"  # the configs, shipped as `ner.conf`

# Higher numbers may import lower ones. Entry points (`ner/cli/`, `python -m` modules, the
# config package that registers the schemas, the lazy `ner.Tagger` export) sit on top.
LAYERS = {
    "common": 0,
    "bilm": 1,
    "data": 1,
    "metrics": 1,
    "reporting": 1,
    "embeddings": 2,
    "tagger": 3,
    "features": 3,
    "pretrain": 3,
    "model": 4,
    "serving": 5,
    "corpus": 5,
    "training": 5,
    "cli": 6,
    "conf": 6,
}
ENTRY_POINT = 6


def imported_packages(path: Path) -> set[str]:
    """The top-level `ner` subpackages a module imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {n.split(".")[1] for n in names if n.startswith("ner.")}
    return found


def modules() -> list[Path]:
    """Every module of the package, the config package included."""
    return sorted([*PACKAGE.rglob("*.py"), *CONF.rglob("*.py")])


def layer_of(path: Path) -> tuple[str, int]:
    """(subpackage, layer) of a module of the package."""
    if path.is_relative_to(CONF):
        return "conf", LAYERS["conf"]
    parts = path.relative_to(PACKAGE).parts
    name = parts[0].removesuffix(".py")
    if path.name == "__main__.py" or name == "__init__":
        return name, ENTRY_POINT
    return name, LAYERS[name]


def test_every_subpackage_has_a_layer():
    packages = {
        p.name.removesuffix(".py")
        for p in PACKAGE.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert packages - {"__init__"} <= set(LAYERS), packages - set(LAYERS)


def test_no_module_imports_a_higher_layer():
    upward = []
    for path in modules():
        own, rank = layer_of(path)
        for target in imported_packages(path) - {own}:
            if LAYERS[target] >= rank and rank != ENTRY_POINT:
                upward.append(f"{path.relative_to(PACKAGE.parent)} imports ner.{target}")
    assert not upward, "\n".join(upward)


def test_python_m_modules_are_aliases_of_console_commands():
    """A library package's `__main__.py` only hands over to its command in `ner/cli/`, so the
    library's own modules never reach up for what a command needs."""
    for path in PACKAGE.glob("*/__main__.py"):
        assert imported_packages(path) == {"cli"}, path


def test_the_library_never_imports_the_entry_points():
    for path in modules():
        _, rank = layer_of(path)
        if rank != ENTRY_POINT:
            assert "cli" not in imported_packages(path), path
