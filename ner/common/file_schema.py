"""Checking the content of a JSON file against a pydantic model, with a one-line error.

A file schema is a pydantic model whose fields carry, as their ``description``, what a value
must be ("a 64-digit hex sha256 digest"); `validate` checks parsed JSON against it in strict mode
(no ``"3"`` for 3, no ``true`` for 1, no 1.0 for 1) and turns the first problem into the caller's
error class, in one line that names the file and the field by its dotted path::

    model/archive.json: field 'bilm.weights.sha256' must be a 64-digit hex sha256 digest (found 7)

A problem inside a field's map or list (a key, an item) is reported as the field's: the message
says what the whole field must be. A validator of the model may raise ``ValueError`` with any
text: the message is the field's description, so it reads the same whichever rule failed.
"""

import types
from pathlib import Path
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from ner.common.errors import NerError

Schema = TypeVar("Schema", bound=BaseModel)

# The configuration of a file schema: strict types; keys a model does not name are ignored
# (a model forbids them with extra="forbid").
STRICT = ConfigDict(strict=True, protected_namespaces=())
_SHOWN_CHARS = 80


def validate(model: type[Schema], content: Any, path: str | Path, error: type[NerError]) -> Schema:
    """`content` (parsed JSON from `path`, the file or another source of the content) as an
    instance of `model`, or `error` raised with one line naming `path`, the field and what it
    must be."""
    try:
        return model.model_validate(content, strict=True)
    except ValidationError as invalid:
        raise error(describe(model, invalid.errors()[0], path)) from None


def describe(model: type[BaseModel], problem: dict[str, Any], path: str | Path) -> str:
    """The message for one pydantic error (an item of ``ValidationError.errors()``)."""
    names, expected = _field_at(model, problem["loc"])
    if problem["type"] == "missing":
        found = "it is missing"
    elif problem["type"] == "extra_forbidden":
        found = f"found the key {_shown(problem['loc'][-1])}"
    else:
        found = f"found {_shown(problem['input'])}"
    if not names:  # the top level
        if problem["type"] == "extra_forbidden":
            return f"{path}: unknown key {_shown(problem['loc'][-1])}"
        return f"{path}: must be a JSON object ({found})"
    what = f"must be {expected}" if expected else f"is invalid: {problem['msg']}"
    return f"{path}: field '{'.'.join(names)}' {what} ({found})"


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 3] + "..."


def _field_at(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[str], str | None]:
    """The dotted names of the deepest model field that `loc` reaches, and its description.
    Map keys and list indices are part of the name only where a model field follows them."""
    names: list[str] = []
    pending: list[str] = []
    expected = None
    node: Any = model
    for part in loc:
        node = _unwrapped(node)
        fields = _fields_by_key(node)
        if part in fields:
            names += [*pending, str(part)]
            pending = []
            expected = fields[part].description
            node = fields[part].annotation
        elif get_origin(node) in (dict, list) and get_args(node):
            pending.append(str(part))
            node = get_args(node)[-1]
        else:
            break
    return names, expected


def _unwrapped(node: Any) -> Any:
    """`node` without ``Annotated`` and without ``| None``."""
    while True:
        origin = get_origin(node)
        if origin is Annotated:
            node = get_args(node)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(node) if a is not type(None)]
            if len(members) != 1:
                return node
            node = members[0]
        else:
            return node


def _fields_by_key(node: Any) -> dict[str, Any]:
    """A model's fields by the key they have in the file (their alias, else their name)."""
    if not (isinstance(node, type) and issubclass(node, BaseModel)):
        return {}
    return {info.alias or name: info for name, info in node.model_fields.items()}
