"""`MicroBatcher`: concurrent requests share model calls, each caller gets exactly its own
results, and a request cancelled before its batch starts is never tagged."""

import threading
import time

import pytest
from tiny_tagger import one_thread, saved_model

from ner.common.memory import release_free_memory
from ner.data.tokenize import tokenize_sentences
from ner.serving.batcher import MicroBatcher
from ner.serving.tagger import Tagger

TEXTS = ["Peter Smith lives in Rome.", "Anna went to Berlin!", "It rained on Monday.", "Rome"]


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return Tagger.load(saved_model())


def submit(batcher: MicroBatcher, texts: list[str]):
    return batcher.submit(texts, [tokenize_sentences(text) for text in texts])


def test_concurrent_requests_get_their_own_results(tagger: Tagger) -> None:
    with one_thread():
        results = tagger.predict(TEXTS)
        expected = {text: r.to_json() for text, r in zip(TEXTS, results, strict=True)}
        batcher = MicroBatcher(tagger, max_wait=0.5)
        answers: dict[int, list] = {}

        def client(number: int) -> None:
            texts = [TEXTS[number % 4], TEXTS[(number + 1) % 4]]
            answers[number] = [r.to_json() for r in submit(batcher, texts).result(timeout=120)]

        threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        batcher.close()
    for number, answer in answers.items():
        assert answer == [expected[TEXTS[number % 4]], expected[TEXTS[(number + 1) % 4]]]
    assert batcher.requests == 8 and batcher.batches < 8


def test_cancelled_request_is_not_tagged(tagger: Tagger) -> None:
    with one_thread():
        batcher = MicroBatcher(tagger, max_wait=2.0)  # the batch waits 2 s for company
        first = submit(batcher, TEXTS[:1])
        time.sleep(0.05)
        second = submit(batcher, TEXTS[1:2])
        assert second.cancel()
        assert [e.text for e in first.result(timeout=120)[0].entities] == ["Peter Smith", "Rome"]
        batcher.close()
    assert (batcher.requests, batcher.batches) == (1, 1)


def test_bad_settings(tagger: Tagger) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        MicroBatcher(tagger, max_batch_tokens=0)
    with pytest.raises(ValueError, match="idle_interval"):
        MicroBatcher(tagger, idle_interval=-1)


def test_memory_goes_back_when_no_request_waits(tagger: Tagger) -> None:
    """The idle hook runs after a batch only when no request waits: two requests queued during
    the first idle call make two batches back to back, with one idle call after both."""
    idle_calls: list[int] = []
    queued: list = []

    def on_idle() -> None:
        idle_calls.append(batcher.batches)
        if len(idle_calls) == 1:  # one-request batches, as max_batch_tokens is 1
            queued.extend(submit(batcher, [text]) for text in TEXTS[1:3])

    with one_thread():
        batcher = MicroBatcher(tagger, max_batch_tokens=1, on_idle=on_idle, idle_interval=0)
        submit(batcher, TEXTS[:1]).result(timeout=120)
        deadline = time.monotonic() + 60
        while len(queued) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [len(future.result(timeout=120)) for future in queued] == [1, 1]
        batcher.close()
    assert (batcher.batches, idle_calls) == (3, [1, 3])


def test_idle_hook_runs_at_most_once_per_interval(tagger: Tagger) -> None:
    """Three idle moments in quick succession, then one after the interval: two calls."""
    idle_calls: list[int] = []
    with one_thread():
        batcher = MicroBatcher(tagger, on_idle=lambda: idle_calls.append(batcher.batches))
        for text in TEXTS[:3]:
            submit(batcher, [text]).result(timeout=120)
        time.sleep(1.0)
        submit(batcher, TEXTS[3:]).result(timeout=120)
        batcher.close()
    assert idle_calls == [1, 4]


def test_default_idle_hook_returns_memory(tagger: Tagger) -> None:
    batcher = MicroBatcher(tagger)
    batcher.close()
    assert batcher.on_idle is release_free_memory
