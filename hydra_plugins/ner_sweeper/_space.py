"""A search's space as Optuna distributions, read from Hydra overrides as hydra-optuna-sweeper
reads them: ``choice(...)`` is categorical, ``range(start, stop, step)`` evenly stepped from start
to stop (categorical with ``shuffle``), ``interval(low, high)`` uniform (``tag(log, ...)``: log
uniform; integers when both ends are); a plain value fixes the key instead."""

from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, Transformer
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    DiscreteUniformDistribution,
    IntLogUniformDistribution,
    IntUniformDistribution,
    LogUniformDistribution,
    UniformDistribution,
)


def _choices(override: Override) -> CategoricalDistribution:
    return CategoricalDistribution(list(override.sweep_iterator(transformer=Transformer.encode)))


def distribution(override: Override) -> BaseDistribution | str:
    """The distribution of one sweep override, or the value of a plain one (as a string)."""
    if not override.is_sweep_override():
        return override.get_value_element_as_str()
    value = override.value()
    if override.is_choice_sweep():
        return _choices(override)
    if override.is_range_sweep():
        if value.shuffle:
            return _choices(override)
        if any(isinstance(x, float) for x in (value.start, value.stop, value.step)):
            return DiscreteUniformDistribution(value.start, value.stop, value.step)
        return IntUniformDistribution(int(value.start), int(value.stop), step=int(value.step))
    if override.is_interval_sweep():
        integers = isinstance(value.start, int) and isinstance(value.end, int)
        if "log" in value.tags:
            if integers:
                return IntLogUniformDistribution(value.start, value.end)
            return LogUniformDistribution(value.start, value.end)
        if integers:
            return IntUniformDistribution(value.start, value.end)
        return UniformDistribution(value.start, value.end)
    raise ValueError(f"{override.input_line}: the Optuna sweeper takes choice, range or interval")


def search_space(arguments: list[str]) -> tuple[dict[str, BaseDistribution], dict[str, Any]]:
    """The searched keys' distributions and the fixed keys' values, in the order given; a key
    given both ways is fixed (the later plain value takes it out of the search)."""
    searched, fixed = {}, {}
    for override in OverridesParser.create().parse_overrides(arguments):
        key, found = override.get_key_element(), distribution(override)
        if isinstance(found, BaseDistribution):
            searched[key] = found
        else:
            fixed[key] = found
    return {k: v for k, v in searched.items() if k not in fixed}, fixed
