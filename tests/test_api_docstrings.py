"""The public API says what each argument is: `Tagger`, `TaggerModel`, `BiLM` and
`prepare_corpus`, and their public methods, have a ``# Parameters`` section naming every
parameter (a class's section is its constructor's)."""

import inspect
import re
from collections.abc import Callable, Iterator

import pytest

from ner.bilm.bilm import BiLM
from ner.data import prepare_corpus
from ner.model.tagger import Tagger
from ner.tagger.model import TaggerModel


def documented() -> Iterator[tuple[str, Callable, str]]:
    """(name, the function whose parameters count, the docstring that documents them)."""
    yield "prepare_corpus", prepare_corpus, prepare_corpus.__doc__ or ""
    for cls in (Tagger, TaggerModel, BiLM):
        yield cls.__name__, cls.__init__, cls.__doc__ or ""
        for name, member in vars(cls).items():
            function = getattr(member, "__func__", member)  # classmethod, staticmethod
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            yield f"{cls.__name__}.{name}", function, function.__doc__ or ""


def parameters(function: Callable) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name not in ("self", "cls")]


CASES = list(documented())


@pytest.mark.parametrize(("name", "function", "doc"), CASES, ids=[name for name, *_ in CASES])
def test_every_parameter_is_documented(name: str, function: Callable, doc: str) -> None:
    assert doc.strip(), f"{name} has no docstring"
    names = parameters(function)
    if not names:
        return
    assert "# Parameters" in doc, f"{name} has no '# Parameters' section"
    section = doc.split("# Parameters", 1)[1]
    missing = [p for p in names if not re.search(rf"^\s*{p}:", section, re.MULTILINE)]
    assert not missing, f"{name}: no 'name: ...' line for {', '.join(missing)}"
