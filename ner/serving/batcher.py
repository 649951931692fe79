"""Dynamic micro-batching: requests that arrive together are tagged in one `Tagger` call.

A tagger is much faster per sentence on a batch of sentences than on one at a time (the biLM
and the BiLSTM run matrix products over the whole batch), so a server that tags each request on
its own falls far behind `ner-predict` under load. `MicroBatcher` keeps one worker thread (the
only thread that touches the model) and a queue: the worker takes the first waiting request,
waits up to `max_wait` seconds for more, takes requests until `max_batch_tokens` tokens, tags
them all in one call and hands each request its own results. A request that timed out before its
batch started is dropped, so a backlog does not grow behind requests nobody waits for. When the
model fails on a batch, its requests are tagged one at a time, so only the request it cannot tag
gets the error.

When no request has come for `idle_after` seconds after some work, the worker hands the memory
that the batches freed back to the system. Batches of varied sizes leave holes in the C heap that
the process otherwise keeps, so the resident memory of a server that has seen varied requests
stays hundreds of MB above what it uses. It waits for a quiet moment because handing pages back
costs time twice: the call itself (10-20 ms) and the page faults when the memory is used again.
"""

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from ner.common.memory import release_free_memory
from ner.data.tokenize import Token
from ner.model.tagger import Tagger

logger = logging.getLogger(__name__)


class Overloaded(RuntimeError):
    """The queue of waiting requests is full."""


@dataclass
class _Request:
    """One caller's texts, each split into sentences of tokens, and where its results go."""

    texts: list[str]
    sentences: list[list[list[Token]]]
    tokens: int
    result: Future = field(default_factory=Future)


class MicroBatcher:
    """Tags requests from many threads or coroutines in shared batches on one worker thread.

    tagger: the model (used by the worker thread only); max_batch_tokens: a batch takes requests
    until it holds this many tokens (a larger single request runs alone); max_wait: seconds the
    worker waits for more requests after the first; max_queue: waiting requests beyond which
    `submit` raises `Overloaded`; batch_size: sentences per forward pass inside a batch;
    on_idle: called on the worker thread once no request has come for `idle_after` seconds since
    the last batch (by default it returns the heap's free pages to the system; None to keep them).
    """

    def __init__(
        self,
        tagger: Tagger,
        *,
        max_batch_tokens: int = 4096,
        max_wait: float = 0.005,
        max_queue: int = 1024,
        batch_size: int = 64,
        on_idle: Callable[[], None] | None = release_free_memory,
        idle_after: float = 1.0,
    ) -> None:
        if max_batch_tokens < 1 or max_queue < 1 or batch_size < 1 or max_wait < 0:
            raise ValueError("max_batch_tokens, max_queue and batch_size must be positive")
        if idle_after < 0:
            raise ValueError("idle_after must not be negative")
        self.tagger = tagger
        self.max_batch_tokens = max_batch_tokens
        self.max_wait = max_wait
        self.batch_size = batch_size
        self.on_idle = on_idle
        self.idle_after = idle_after
        self._queue: queue.Queue[_Request | None] = queue.Queue(maxsize=max_queue)
        self._worker = threading.Thread(target=self._run, name="ner-batcher", daemon=True)
        self.batches = 0  # tagger calls so far, and the requests they served
        self.requests = 0
        self._worker.start()

    def submit(self, texts: list[str], sentences: Sequence[Sequence[Sequence[Token]]]) -> Future:
        """Queue texts (each split into sentences of tokens, offsets into the text); the future
        resolves to one `TaggedText` per text. Cancel the future to drop a request not yet
        started."""
        request = _Request(
            list(texts),
            [[list(sentence) for sentence in document] for document in sentences],
            sum(len(sentence) for document in sentences for sentence in document),
        )
        try:
            self._queue.put_nowait(request)
        except queue.Full:
            raise Overloaded(f"{self._queue.maxsize} requests are already waiting") from None
        return request.result

    def close(self) -> None:
        """Stop the worker after the requests already queued."""
        self._queue.put(None)
        self._worker.join()

    def _collect(self, first: _Request) -> tuple[list[_Request], bool]:
        """`first` plus the requests that arrive within `max_wait`, up to `max_batch_tokens`;
        and whether the queue was closed meanwhile.

        Unlike `ner.common.batching`, this budget runs over a stream in arrival order: requests
        are not all in hand and are never reordered (the first waiter goes first), and the
        tokens counted are the requests' real ones. The tagger sorts the sentences of the
        batch by length itself (`Tagger.tag_tokenized`)."""
        batch, tokens = [first], first.tokens
        deadline = time.monotonic() + self.max_wait
        while tokens < self.max_batch_tokens:
            try:
                request = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if request is None:
                return batch, True
            batch.append(request)
            tokens += request.tokens
        return batch, False

    def _run(self) -> None:
        closed = False
        worked = False  # batches ran since on_idle was last called
        while not closed:
            wait = self.idle_after if worked and self.on_idle is not None else None
            try:
                first = self._queue.get(timeout=wait)
            except queue.Empty:  # no request for idle_after seconds since the last batch
                worked = False
                if self.on_idle is not None:
                    try:
                        self.on_idle()
                    except Exception:  # the worker must outlive it, or every request would hang
                        logger.exception("the idle hook failed")
                continue
            if first is None:
                break
            batch, closed = self._collect(first)
            live = [r for r in batch if r.result.set_running_or_notify_cancel()]
            if live:
                self._tag(live)
                worked = True

    def _tag(self, requests: list[_Request]) -> None:
        """Tag `requests` in one model call and hand each its own results. If the call fails,
        each request is tagged alone, so a request the model cannot tag fails by itself and the
        others of its batch still get their answers."""
        try:
            results = self.tagger.tag_tokenized(
                [text for r in requests for text in r.texts],
                [document for r in requests for document in r.sentences],
                self.batch_size,
            )
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
        start = 0
        for request in requests:
            request.result.set_result(results[start : start + len(request.texts)])
            start += len(request.texts)
