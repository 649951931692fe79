"""The reliability suite: bad inputs and injected faults. Tests marked ``long`` (many fuzz
examples, whole training runs killed and resumed) run only with ``NER_LONG_TESTS=1``."""

import os

import pytest
from hypothesis import HealthCheck, settings

LONG = os.environ.get("NER_LONG_TESTS") == "1"
# Fuzz examples per reader: a quick sample by default, the release run tries many more (2,000;
# 300 for the ner-predict input, where every example runs the tagger).
settings.register_profile(
    "reliability",
    max_examples=2000 if LONG else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if LONG:
        return
    skip = pytest.mark.skip(reason="long variant: set NER_LONG_TESTS=1 to run it")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
