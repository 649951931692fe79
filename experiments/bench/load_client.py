"""A bounded load test for a running `ner-serve`: C concurrent clients, each sending R requests
of one text, on one keep-alive connection each; latency percentiles and texts per second.

    report = run_load("http://127.0.0.1:8000", texts, clients=16, requests=200)

Every request and answer is counted, so a dropped or failed request shows up in the report
(`errors`, `answered` < `sent`) instead of vanishing.
"""

import http.client
import json
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlparse


@dataclass
class LoadReport:
    """What a load run saw; latencies in milliseconds."""

    clients: int
    requests_per_client: int
    sent: int = 0
    answered: int = 0
    errors: list[str] = field(default_factory=list)
    texts: int = 0
    entities: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    def percentile(self, share: float) -> float:
        """The nearest-rank percentile: the ⌈share·n⌉-th smallest of the n latencies, the least
        value that at least `share` of the answered requests do not exceed."""
        ordered = sorted(self.latencies_ms)
        if not ordered:
            return float("nan")
        rank = math.ceil(round(share * len(ordered), 9))  # 0.29 * 100 is 28.999999999999996
        return ordered[min(len(ordered), max(1, rank)) - 1]

    def summary(self) -> dict[str, Any]:
        """The figures to record (no per-request latencies)."""
        record = {k: v for k, v in asdict(self).items() if k != "latencies_ms"}
        record["errors"] = self.errors[:10]
        record["error_count"] = len(self.errors)
        record.update(
            p50_ms=round(self.percentile(0.50), 2),
            p99_ms=round(self.percentile(0.99), 2),
            requests_per_second=round(self.answered / self.seconds, 1),
            texts_per_second=round(self.texts / self.seconds, 1),
            seconds=round(self.seconds, 3),
        )
        return record


def run_load(
    url: str, texts: Sequence[str], *, clients: int = 16, requests: int = 200, timeout: float = 120
) -> LoadReport:
    """Client c sends texts[(c * requests + i) % len(texts)] for i < `requests`, each as
    ``{"text": ...}`` to ``url``/predict, all clients at once."""
    target = urlparse(url)
    report = LoadReport(clients, requests)
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def client(number: int) -> None:
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=timeout)
        start.wait()
        for index in range(requests):
            text = texts[(number * requests + index) % len(texts)]
            body = json.dumps({"text": text}).encode()
            with lock:
                report.sent += 1
            began = time.perf_counter()
            try:
                connection.request("POST", "/predict", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                connection = http.client.HTTPConnection(
                    target.hostname, target.port, timeout=timeout
                )
                with lock:
                    report.errors.append(f"client {number} request {index}: {error!r}")
                continue
            elapsed = (time.perf_counter() - began) * 1000
            with lock:
                if response.status != 200:
                    report.errors.append(
                        f"client {number} request {index}: {response.status} {data[:200]!r}"
                    )
                    continue
                (document,) = json.loads(data)["documents"]
                report.answered += 1
                report.latencies_ms.append(elapsed)
                report.texts += 1
                report.entities += len(document["entities"])
        connection.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    report.seconds = time.perf_counter() - began
    return report
