"""Typed config schemas: dataclass fields that carry a range or a list of choices, and the check
that enforces them.

Hydra and OmegaConf check a schema's types and key names while a config is composed; ranges and
choices, which types cannot express, are checked by `check_ranges` before a job reads any data.
Every message names the key, the value and what is expected.
"""

import inspect
from collections.abc import Callable
from dataclasses import field, fields, is_dataclass
from typing import Any

from omegaconf import MISSING, DictConfig

from ner.common.errors import NerError


class ConfigError(NerError, ValueError):
    """A config value outside what its key allows."""


def defaults_of(target: Callable[..., Any]) -> dict[str, Any]:
    """The defaults of `target`'s keyword arguments (a class: its constructor's), by name: where a
    schema takes the default of a key that is an argument of the object it builds, so that each
    default is written once, in the signature."""
    return {
        name: parameter.default
        for name, parameter in inspect.signature(target).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


def at_least(minimum: float, default: Any = MISSING) -> Any:
    """A dataclass field whose value (when set) must be ≥ `minimum`."""
    return field(default=default, metadata={"min": minimum})


def fraction(default: Any = None) -> Any:
    """A dataclass field whose value (when set) must lie in [0, 1)."""
    return field(default=default, metadata={"min": 0.0, "below": 1.0})


def probability(default: Any) -> Any:
    """A dataclass field whose value (when set) must lie in [0, 1]."""
    return field(default=default, metadata={"min": 0.0, "max": 1.0})


def share(default: Any) -> Any:
    """A dataclass field whose value (when set) must lie in (0, 1]: a part of something, at most
    all of it."""
    return field(default=default, metadata={"above": 0.0, "max": 1.0})


def one_of(*choices: str, default: Any = MISSING) -> Any:
    """A dataclass field whose value (when set) must be one of `choices`."""
    return field(default=default, metadata={"choices": choices})


def _check(key: str, value: Any, metadata: Any) -> None:
    """Raise `ConfigError` when `value` breaks the field's range or choices."""
    if value is None:
        return
    choices = metadata.get("choices")
    if choices and value not in choices:
        raise ConfigError(f"{key}={value}: expected one of {', '.join(choices)}")
    minimum, above = metadata.get("min"), metadata.get("above")
    below, maximum = metadata.get("below"), metadata.get("max")
    outside = (
        (minimum is not None and value < minimum)
        or (above is not None and value <= above)
        or (below is not None and value >= below)
        or (maximum is not None and value > maximum)
    )
    if outside:
        bounds = [
            f"≥ {minimum}" if minimum is not None else f"> {above}" if above is not None else "",
            f"< {below}" if below is not None else f"≤ {maximum}" if maximum is not None else "",
        ]
        expected = " and ".join(bound for bound in bounds if bound)
        raise ConfigError(f"{key}={value}: expected a number {expected}")


def check_ranges(node: DictConfig, schema: type, prefix: str = "") -> None:
    """Check every field of `node` (and of its nested dataclass nodes) against the range and
    choices that `schema` declares; raise `ConfigError` at the first value outside them."""
    for spec in fields(schema):
        key = f"{prefix}{spec.name}"
        value = node.get(spec.name)
        _check(key, value, spec.metadata)
        nested = [t for t in getattr(spec.type, "__args__", (spec.type,)) if is_dataclass(t)]
        if nested and isinstance(value, DictConfig):
            check_ranges(value, nested[0], f"{key}.")
