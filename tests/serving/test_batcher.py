"""`MicroBatcher`: concurrent requests share model calls, each caller gets exactly its own
results, a request cancelled before its batch starts is never tagged, one cancelled while it is
tagged stops, and a request the model fails on fails alone."""

import threading
import time

import pytest
from tiny_tagger import one_thread, saved_model

from ner.common.memory import release_free_memory
from ner.model.inputs import PreparedText, prepared_texts
from ner.model.tagger import Tagger, TaggingStopped
from ner.serving.batcher import MicroBatcher

TEXTS = ["Peter Smith lives in Rome.", "Anna went to Berlin!", "It rained on Monday.", "Rome"]


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return Tagger.load(saved_model())


def submit(batcher: MicroBatcher, texts: list[str]):
    return batcher.submit(prepared_texts(texts, "news"))


def run_clients(client, count: int) -> None:
    """Run `client(0)` … `client(count - 1)` in threads at once; return when all are done."""
    threads = [threading.Thread(target=client, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_requests_get_their_own_results(tagger: Tagger) -> None:
    with one_thread():
        results = tagger.predict(TEXTS)
        expected = {text: r.to_json() for text, r in zip(TEXTS, results, strict=True)}
        batcher = MicroBatcher(tagger, max_wait=0.5)
        answers: dict[int, list] = {}

        def client(number: int) -> None:
            texts = [TEXTS[number % 4], TEXTS[(number + 1) % 4]]
            answers[number] = [r.to_json() for r in submit(batcher, texts).result(timeout=120)]

        run_clients(client, 8)
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


def test_a_request_cancelled_while_tagged_stops(tagger: Tagger) -> None:
    """A request of 400 sentences (100 forward passes of 4) is cancelled once its batch runs:
    the model stops at its next pass instead of tagging the rest for nobody."""
    texts = [" ".join(TEXTS)] * 100
    with one_thread():
        batcher = MicroBatcher(tagger, batch_size=4, on_idle=None)
        began = time.monotonic()
        submit(batcher, texts).result(timeout=300)
        whole = time.monotonic() - began
        future = submit(batcher, texts)
        while not future.running():
            time.sleep(0.001)
        assert not future.cancel()  # too late to drop it, not to stop it
        began = time.monotonic()
        with pytest.raises(TaggingStopped):
            future.result(timeout=300)
        rest = time.monotonic() - began
        batcher.close()
    assert rest < whole / 4, (rest, whole)  # before: the whole request was tagged
    assert (batcher.requests, batcher.batches) == (1, 1)


def test_a_request_still_wanted_keeps_its_batch_going(tagger: Tagger) -> None:
    """Of two requests in one batch, one is cancelled while the batch runs: the other still
    gets its results."""
    with one_thread():
        batcher = MicroBatcher(tagger, batch_size=1, max_wait=0.5, on_idle=None)
        kept, dropped = submit(batcher, TEXTS * 10), submit(batcher, TEXTS * 10)
        while not dropped.running():
            time.sleep(0.001)
        dropped.cancel()
        assert len(kept.result(timeout=300)) == 40
        assert len(dropped.result(timeout=300)) == 40
        batcher.close()


def test_a_failing_request_fails_alone(tagger: Tagger, caplog) -> None:
    """Twelve requests in one micro-batch, one of them with an empty sentence (which the model
    cannot tag): the eleven others get their results, the bad one its error."""
    with one_thread():
        expected = [r.to_json() for r in tagger.predict(TEXTS)]
        batcher = MicroBatcher(tagger, max_wait=1.0)  # all twelve arrive within the wait
        futures = [submit(batcher, [TEXTS[n % 4]]) for n in range(6)]
        bad = batcher.submit([PreparedText("Rome", [[]])])
        futures += [submit(batcher, [TEXTS[n % 4]]) for n in range(6, 11)]
        answers = [future.result(timeout=120) for future in futures]
        with pytest.raises(ValueError, match="has no tokens"):
            bad.result(timeout=120)
        batcher.close()
    assert [answer[0].to_json() for answer in answers] == [expected[n % 4] for n in range(11)]
    assert batcher.requests == 11
    assert "a micro-batch of 12 requests failed" in caplog.text


def test_a_lone_request_does_not_wait(tagger: Tagger) -> None:
    """No fixed wait by default, and nothing is expected: a lone request is tagged at once, even
    when the batcher would wait seconds for requests it expects."""
    with one_thread():
        tagger.predict(TEXTS[:1])  # kernels and caches
        batcher = MicroBatcher(tagger, arrival_wait=5.0, on_idle=None)
        began = time.monotonic()
        submit(batcher, TEXTS[:1]).result(timeout=120)
        took = time.monotonic() - began
        batcher.close()
    assert took < 2.5


def test_a_free_model_waits_for_requests_being_prepared(tagger: Tagger) -> None:
    """Right after a batch, a request queued while another is still being prepared (inside
    `arriving`) waits for it: both are tagged in one batch, though the second comes 0.3 s after
    the first."""
    with one_thread():
        batcher = MicroBatcher(tagger, arrival_wait=5.0, on_idle=None)
        submit(batcher, TEXTS[2:3]).result(timeout=120)  # the model has just been busy
        with batcher.arriving():
            first = submit(batcher, TEXTS[:1])
            time.sleep(0.3)
            second = submit(batcher, TEXTS[1:2])
        answers = [first.result(timeout=120), second.result(timeout=120)]
        batcher.close()
    assert [len(answer) for answer in answers] == [1, 1]
    assert (batcher.requests, batcher.batches) == (3, 2)


def test_clients_that_wait_for_their_answers_share_one_batch(tagger: Tagger) -> None:
    """Eight clients, each sending its next request when it has its answer: after the first
    batches, a free model waits for the clients it has just answered instead of splitting them
    into two cohorts that take turns."""
    rounds = 6
    with one_thread():
        batcher = MicroBatcher(tagger, arrival_wait=1.0, on_idle=None)

        def client(number: int) -> None:
            for index in range(rounds):
                submit(batcher, [TEXTS[(number + index) % 4]]).result(timeout=120)
                time.sleep(0.01 * number)  # the answers reach the clients at different times

        run_clients(client, 8)
        batcher.close()
    assert batcher.requests == 8 * rounds
    # about one batch per round once the load is found (more on a busy machine, where a client
    # can be late for its round); without the wait: six per round
    assert batcher.batches <= 3 * rounds


def test_bad_settings(tagger: Tagger) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        MicroBatcher(tagger, max_batch_tokens=0)
    with pytest.raises(ValueError, match="idle_after"):
        MicroBatcher(tagger, idle_after=-1)


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_memory_goes_back_once_the_server_is_quiet(tagger: Tagger) -> None:
    """The idle hook runs once no request has come for `idle_after` seconds since a batch: not
    between requests that keep coming, and not again while nothing happens."""
    idle_calls: list[int] = []
    with one_thread():
        batcher = MicroBatcher(
            tagger,
            max_batch_tokens=1,  # one request per batch
            idle_after=0.3,
            on_idle=lambda: idle_calls.append(batcher.batches),
        )
        submit(batcher, TEXTS[:1]).result(timeout=120)
        wait_for(lambda: idle_calls == [1])
        futures = [submit(batcher, [text]) for text in TEXTS[1:3]]
        assert [len(future.result(timeout=120)) for future in futures] == [1, 1]
        wait_for(lambda: len(idle_calls) == 2)
        time.sleep(0.7)  # quiet for longer: no further call
        batcher.close()
    assert (batcher.batches, idle_calls) == (3, [1, 3])


def test_a_failing_idle_hook_does_not_stop_the_worker(tagger: Tagger, caplog) -> None:
    def on_idle() -> None:
        raise OSError("no memory to give back")

    with one_thread():
        batcher = MicroBatcher(tagger, idle_after=0.05, on_idle=on_idle)
        submit(batcher, TEXTS[:1]).result(timeout=120)
        wait_for(lambda: "the idle hook failed" in caplog.text)
        assert len(submit(batcher, TEXTS[1:2]).result(timeout=120)) == 1
        batcher.close()
    assert "no memory to give back" in caplog.text and batcher.batches == 2


def test_default_idle_hook_returns_memory(tagger: Tagger) -> None:
    batcher = MicroBatcher(tagger)
    batcher.close()
    assert batcher.on_idle is release_free_memory
