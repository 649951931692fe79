"""The reliability suite: bad inputs and injected faults. Tests marked ``long`` (many fuzz
examples, whole training runs killed and resumed) run only with ``NER_LONG_TESTS=1``."""

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("NER_LONG_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="long variant: set NER_LONG_TESTS=1 to run it")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
