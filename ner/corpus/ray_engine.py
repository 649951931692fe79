"""``--engine ray``: shards tagged by `RayTagger` actors on a Ray cluster, ``jobs`` of them with
``threads`` CPUs each. The model folder goes to the cluster once through its object store and
each shard's lines go to an actor with the call, so no node reads the driver's files; the driver
writes what they return. Ray is an optional extra: only this module imports it."""

import logging
import threading
from concurrent.futures import Future

from ner.common.errors import InputError
from ner.corpus.ray_tagger import RayTagger, pack_model
from ner.corpus.workers import ShardResult, TagOptions
from ner.data.tag_input import Line
from ner.model.evaluation import GoldSurvey
from ner.model.shipped import resolve_model

try:
    import ray
    from ray.exceptions import RayActorError
except ImportError:
    raise InputError(
        "--engine ray needs Ray: pip install 'ner-elmo[ray]' (on the driver and every node)"
    ) from None


class RayEngine:
    """Tags shards on the Ray cluster at `address` (None: Ray's default, ``RAY_ADDRESS`` or the
    cluster started on this machine), each given to the actor with the fewest in flight."""

    lost = (RayActorError,)  # what a shard's result raises when its actor died

    def __init__(self, options: TagOptions, jobs: int, address: str | None) -> None:
        self.started = not ray.is_initialized()
        if self.started:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        files = ray.put(pack_model(resolve_model(options.model)))
        actor = ray.remote(num_cpus=options.threads)(RayTagger)
        self.actors = [actor.remote(options, files) for _ in range(jobs)]
        self.busy = [0] * jobs
        self.lock = threading.Lock()
        self.in_flight = 2 * jobs - 1  # shards in flight besides the one just sent

    def submit(self, lines: list[Line], gold: GoldSurvey | None) -> "Future[ShardResult]":
        with self.lock:
            index = min(range(len(self.actors)), key=self.busy.__getitem__)
            self.busy[index] += 1
        future = self.actors[index].tag.remote(lines, gold).future()
        future.add_done_callback(lambda _: self._done(index))
        return future

    def _done(self, index: int) -> None:
        with self.lock:
            self.busy[index] -= 1

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        if self.started:
            ray.shutdown()
