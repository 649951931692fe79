"""The package's imports run one way: entry points → training/serving → model →
tagger/features/pretrain → bilm/data/embeddings → common. A module may import its own package or
any lower layer, never a higher one, so the folder names draw the architecture; and no two
modules import each other, directly or round a longer circle, at module level."""

import ast
from pathlib import Path

import ner

PACKAGE = Path(ner.__file__).parent
CONF = PACKAGE.parent / "conf"  # the configs, shipped as `ner.conf`

# Higher numbers may import lower ones. Entry points (`ner/cli/`, the config package that
# registers the schemas, the lazy `ner.Tagger` export) sit on top; a package's `__main__.py` is
# in its package's layer, so `python -m` never runs an arrow back up.
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
    if name == "__init__":
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


def test_the_library_never_imports_the_entry_points():
    for path in modules():
        _, rank = layer_of(path)
        if rank != ENTRY_POINT:
            assert "cli" not in imported_packages(path), path


def module_name(path: Path) -> str:
    """``ner.model.tagger`` for ner/model/tagger.py (a package: its own name)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, known: set[str]) -> set[str]:
    """The `ner` modules that a module imports when it is imported: the import statements of its
    body, in blocks too (``if TYPE_CHECKING:``, ``try:``), not those inside functions."""
    found: set[str] = set()
    pending = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            pending.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return found & known


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_circle_of_imports():
    """A package's `__init__` imports its modules, so its own package is no edge."""
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {
        name: {
            target
            for target in module_imports(path, set(paths))
            if not name.startswith(f"{target}.") and target != name
        }
        for name, path in paths.items()
    }
    assert not circles(graph), circles(graph)


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
