"""`limit_kernel_cache`: sets oneDNN's primitive cache capacity unless the user already did."""

import os

import pytest

from ner.common.memory import KERNEL_CACHE_ENTRIES, KERNEL_CACHE_VARIABLES, limit_kernel_cache


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in KERNEL_CACHE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_sets_the_capacity(clean_environment: pytest.MonkeyPatch) -> None:
    assert limit_kernel_cache()
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == str(KERNEL_CACHE_ENTRIES) == "128"


@pytest.mark.parametrize("name", KERNEL_CACHE_VARIABLES)
def test_the_users_setting_wins(clean_environment: pytest.MonkeyPatch, name: str) -> None:
    clean_environment.setenv(name, "7")
    assert not limit_kernel_cache(64)
    assert {n: os.environ.get(n) for n in KERNEL_CACHE_VARIABLES} == {
        n: "7" if n == name else None for n in KERNEL_CACHE_VARIABLES
    }
