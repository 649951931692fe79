"""`collector_paused`: Python's cyclic garbage collector off inside, back as it was after."""

import gc
import threading

import pytest

from ner.common.memory import collector_paused


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_off_inside_and_on_again_after():
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_nested_blocks_and_a_decorated_function():
    @collector_paused()
    def inner() -> bool:
        return gc.isenabled()

    with collector_paused():
        assert inner() is False
        assert not gc.isenabled()  # the inner block's end does not turn it on
    assert gc.isenabled()
    assert inner() is False and gc.isenabled()


def test_it_comes_back_on_when_the_last_of_two_threads_leaves():
    entered, first_left = threading.Barrier(2), threading.Event()

    def first() -> None:
        with collector_paused():
            entered.wait()
        first_left.set()

    thread = threading.Thread(target=first)
    thread.start()
    with collector_paused():
        entered.wait()
        first_left.wait(5)
        assert not gc.isenabled()  # the other thread left, this block is still open
    thread.join(5)
    assert gc.isenabled()
