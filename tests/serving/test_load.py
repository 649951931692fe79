"""A bounded load test on loopback: 16 concurrent clients × 200 requests against the real
server; every request is answered with 200, none is dropped, and the answers equal the
tagger's own."""

import json

import pytest
from live_server import Server
from load_client import LoadReport, run_load
from tiny_tagger import corpus, one_thread

from ner.model.tagger import Tagger

TEXTS = [" ".join(tokens) for tokens, _ in corpus()] + [
    "Peter Smith lives in Rome. Anna went to Berlin!",
    "“Mary” flew from Berlin to Paris on Monday, didn't she?",
]


@pytest.mark.parametrize(
    ("latencies", "share", "expected"),
    [
        ([5, 1, 4, 2, 3], 0.50, 3),  # the median: rank ⌈2.5⌉ = 3, not round(2.5) = 2
        (list(range(1, 151)), 0.99, 149),  # ⌈148.5⌉
        (list(range(1, 101)), 0.99, 99),
        (list(range(1, 101)), 0.29, 29),  # 0.29 * 100 is 28.999999999999996 in floating point
        ([7], 0.99, 7),
        ([1, 2], 0.0, 1),
        ([1, 2], 1.0, 2),
    ],
)
def test_percentile_is_the_nearest_rank(latencies: list[float], share: float, expected) -> None:
    report = LoadReport(clients=1, requests_per_client=len(latencies), latencies_ms=latencies)
    assert report.percentile(share) == expected


def test_sixteen_clients_two_hundred_requests_each(server: Server) -> None:
    _, before = server.request("GET", "/health")
    report = run_load(server.url, TEXTS, clients=16, requests=200)
    summary = report.summary()
    print(json.dumps(summary))  # p50/p99 latency and texts/s, visible with pytest -s
    assert report.errors == []
    assert report.sent == report.answered == 16 * 200
    assert len(report.latencies_ms) == 3200
    assert 0 < summary["p50_ms"] <= summary["p99_ms"]
    _, after = server.request("GET", "/health")
    assert after["requests"] - before["requests"] == 3200
    assert after["batches"] - before["batches"] < 3200  # requests were batched together
    with one_thread():
        expected = Tagger.load(server.model).predict(TEXTS)
    assert report.entities == sum(
        len(expected[(c * 200 + i) % len(TEXTS)].entities) for c in range(16) for i in range(200)
    )
