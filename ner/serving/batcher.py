"""Dynamic micro-batching: requests that arrive together are tagged in one `Tagger` call.

A tagger is much faster per sentence on a batch of sentences than on one at a time (the biLM
and the BiLSTM run matrix products over the whole batch), so a server that tags each request on
its own falls far behind `ner-predict` under load. `MicroBatcher` keeps one worker thread (the
only thread that touches the model) and a queue. When the model is free, the worker takes every
request waiting, up to `max_batch_tokens` tokens, tags them all in one call and hands each
request its own results; requests that come while the model is busy wait in the queue and make
the next batch, which is therefore as large as the load. A free model waits only for requests
it expects: those the server is already preparing (read, parsed, being tokenized: `arriving`),
and as many as were in the server at once during the last batch (its clients, answered, send
their next requests); it waits, after the last batch ended, for as long as that batch took, at
least `arrival_wait` seconds and at most four times that (on a busy core everything slows
together). Without that, C clients that each wait for their answer split into two cohorts that
take turns on the model in batches of about C/2, each paying the model's per-call costs; with
it they share one batch. A lone request, or the first after a quiet spell, starts at once.
`max_wait` adds a fixed wait for more requests after the first (none by default). A request
that timed out before its batch started is dropped, so a backlog does not grow behind requests
nobody waits for, and a batch whose requests are all cancelled while it runs (their clients
went away) stops before its next forward pass, so an abandoned request of 50,000 tokens does not
hold the model for seconds. When the model fails on a batch, its requests are tagged one at a
time, so only the request it cannot tag gets the error.

When no request has come for `idle_after` seconds after some work, the worker hands the memory
that the batches freed back to the system. Batches of varied sizes leave holes in the C heap that
the process otherwise keeps, so the resident memory of a server that has seen varied requests
stays hundreds of MB above what it uses. It waits for a quiet moment because handing pages back
costs time twice: the call itself (10-20 ms) and the page faults when the memory is used again.
"""

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field

from ner.common.memory import release_free_memory
from ner.model.inputs import PreparedText
from ner.model.tagger import Tagger, TaggingStopped

logger = logging.getLogger(__name__)


class Overloaded(RuntimeError):
    """The queue of waiting requests is full."""


class RequestFuture(Future):
    """Where a request's results go. `cancel` drops a request whose batch has not started, as
    for any future, and marks one being tagged `abandoned`, which stops its batch once every
    request of it is."""

    def __init__(self) -> None:
        super().__init__()
        self.abandoned = False

    def cancel(self) -> bool:
        self.abandoned = True
        return super().cancel()


@dataclass
class _Request:
    """One caller's texts, each split into sentences of tokens, and where its results go."""

    texts: list[PreparedText]
    tokens: int
    result: RequestFuture = field(default_factory=RequestFuture)


class MicroBatcher:
    """Tags requests from many threads or coroutines in shared batches on one worker thread.

    tagger: the model (used by the worker thread only); max_batch_tokens: a batch takes requests
    until it holds this many tokens (a larger single request runs alone); max_wait: seconds the
    worker waits for more requests after the first (0: it takes what is queued); arrival_wait:
    the least of how long a free model waits for requests it expects (`arriving`, or as many as
    were in the server during its last batch) before it starts a batch;
    max_queue: waiting requests beyond which `submit` raises `Overloaded`; batch_size: sentences
    per forward pass inside a batch; on_idle: called on the worker thread once no request has come
    for `idle_after` seconds since the last batch (by default it returns the heap's free pages to
    the system; None to keep them).
    """

    def __init__(
        self,
        tagger: Tagger,
        *,
        max_batch_tokens: int = 4096,
        max_wait: float = 0.0,
        arrival_wait: float = 0.05,
        max_queue: int = 1024,
        batch_size: int = 64,
        on_idle: Callable[[], None] | None = release_free_memory,
        idle_after: float = 1.0,
    ) -> None:
        if max_batch_tokens < 1 or max_queue < 1 or batch_size < 1:
            raise ValueError("max_batch_tokens, max_queue and batch_size must be positive")
        if max_wait < 0 or arrival_wait < 0 or idle_after < 0:
            raise ValueError("max_wait, arrival_wait and idle_after must not be negative")
        self.tagger = tagger
        self.max_batch_tokens = max_batch_tokens
        self.max_wait = max_wait
        self.arrival_wait = arrival_wait
        self.max_queue = max_queue
        self.batch_size = batch_size
        self.on_idle = on_idle
        self.idle_after = idle_after
        self._waiting: deque[_Request] = deque()
        self._arriving = 0  # requests inside `arriving`
        self._running = 0  # requests of the batch being tagged
        self._peak = 0  # the most requests in the server at once since the last batch began
        self._expected = 0  # ... during the last batch: what the next one waits for
        self._free_since = 0.0  # time.monotonic() when the last batch ended
        self._last_took = 0.0  # seconds the last batch took
        self._closed = False
        self._changed = threading.Condition()  # a request queued or arrived, or the queue closed
        self._worker = threading.Thread(target=self._run, name="ner-batcher", daemon=True)
        self.batches = 0  # tagger calls so far, and the requests they served
        self.requests = 0
        self._worker.start()

    @contextmanager
    def arriving(self) -> Iterator[None]:
        """Mark a request being prepared (parsed, validated, tokenized) for `submit`: a free
        model waits for it (up to `arrival_wait`) instead of starting a batch without it."""
        with self._changed:
            self._arriving += 1
            self._count_in_server()
        try:
            yield
        finally:
            with self._changed:
                self._arriving -= 1
                if not self._arriving:
                    self._changed.notify()

    def submit(self, texts: Sequence[PreparedText]) -> RequestFuture:
        """Queue texts split into sentences of tokens (`ner.model.tagger.Tagger.prepare`); the
        future resolves to one `TaggedText` per text. Cancel the future to drop a request not
        yet started, or to stop one being tagged (`RequestFuture`)."""
        request = _Request(
            list(texts), sum(len(sentence) for text in texts for sentence in text.sentences)
        )
        with self._changed:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            if len(self._waiting) >= self.max_queue:
                raise Overloaded(f"{self.max_queue} requests are already waiting")
            self._waiting.append(request)
            # (a request queued from inside `arriving` is counted there already)
            self._peak = max(
                self._peak, self._running + len(self._waiting) + max(self._arriving - 1, 0)
            )
            self._changed.notify()
        return request.result

    def _count_in_server(self) -> None:
        """Note how many requests are in the server now (called with the lock held)."""
        self._peak = max(self._peak, self._running + len(self._waiting) + self._arriving)

    def close(self) -> None:
        """Stop the worker after the requests already queued."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._worker.join()

    def _collect(self) -> list[_Request]:
        """The next batch: the first waiting request, then those that follow (for `max_wait`
        after it, and until `arrival_wait` after the last batch ended while more are expected),
        up to `max_batch_tokens`. Called with the lock held and a request waiting.

        Unlike `ner.common.batching`, this budget runs over a stream in arrival order: requests
        are not all in hand and are never reordered (the first waiter goes first), and the
        tokens counted are the requests' real ones. The tagger sorts the sentences of the
        batch by length itself (`Tagger.predict`)."""
        batch = [self._waiting.popleft()]
        tokens = batch[0].tokens
        now = time.monotonic()
        patience = min(max(self.arrival_wait, self._last_took), 4 * self.arrival_wait)
        fixed, arrivals = now + self.max_wait, self._free_since + patience
        while tokens < self.max_batch_tokens:
            if self._waiting:
                request = self._waiting.popleft()
                batch.append(request)
                tokens += request.tokens
                continue
            if self._closed:
                break
            now = time.monotonic()
            expecting = self._arriving or len(batch) < self._expected
            deadline = max(fixed, arrivals if expecting else now)
            if deadline <= now:
                break
            self._changed.wait(deadline - now)
        return batch

    def _run(self) -> None:
        worked = False  # batches ran since on_idle was last called
        while True:
            with self._changed:
                while not self._waiting and not self._closed:
                    wait = self.idle_after if worked and self.on_idle is not None else None
                    if not self._changed.wait(wait) and not self._waiting:
                        break  # no request for idle_after seconds since the last batch
                if self._waiting:
                    batch = self._collect()
                    self._running = self._peak = len(batch)
                    self._count_in_server()
                elif self._closed:
                    return
                else:
                    batch = []
            if not batch:
                worked = False
                try:
                    self.on_idle()  # type: ignore[misc]
                except Exception:  # the worker must outlive it, or every request would hang
                    logger.exception("the idle hook failed")
                continue
            started = time.monotonic()
            live = [r for r in batch if r.result.set_running_or_notify_cancel()]
            if live:
                self._tag(live)
                worked = True
            with self._changed:
                self._expected, self._running = self._peak, 0
                self._free_since = time.monotonic()
                self._last_took = self._free_since - started

    def _tag(self, requests: list[_Request]) -> None:
        """Tag `requests` in one model call and hand each its own results. If the call fails,
        each request is tagged alone, so a request the model cannot tag fails by itself and the
        others of its batch still get their answers. A batch whose requests are all abandoned
        stops before its next forward pass, each request failing with `TaggingStopped`."""
        try:
            results = self.tagger.predict(
                [text for r in requests for text in r.texts],
                batch_size=self.batch_size,
                stop=lambda: all(r.result.abandoned for r in requests),
            )
        except TaggingStopped as stopped:
            for request in requests:
                request.result.set_exception(stopped)
            return
        except Exception as error:
            if len(requests) == 1:  # its caller hears why
                requests[0].result.set_exception(error)
                return
            logger.warning(
                "a micro-batch of %d requests failed (%s: %s); tagging them one at a time",
                len(requests),
                type(error).__name__,
                error,
            )
            for request in requests:
                self._tag([request])
            return
        self.batches += 1
        self.requests += len(requests)
        with self._changed:  # answered, they leave the server (their clients send their next)
            self._running = max(0, self._running - len(requests))
        start = 0
        for request in requests:
            request.result.set_result(results[start : start + len(request.texts)])
            start += len(request.texts)
