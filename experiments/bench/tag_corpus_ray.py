"""How fast is ``ner-predict --engine ray`` against ``--engine local`` on the same cores? Both
with ``--jobs 2 --threads 1``: two worker processes here, or two actors on a local Ray cluster of
two nodes of one CPU each (a head and a second node on 127.0.0.1, started by this script and
stopped at its end), on the same raw-text corpus (`tag_corpus.make_corpus`).

    .venv/bin/python experiments/bench/tag_corpus_ray.py --megabytes 0.3 --rounds 2 \\
        --out experiments/results/bench/corpus_ray.json

Needs the ``ray`` extra (``pip install -e '.[ray]'``). Each measurement is a fresh
``ner-predict`` process into an empty output folder (`tag_corpus.tag`: tokens/s of the closing
summary line, model loads and, for Ray, connecting to the cluster and starting the actors
included); the engines take turns round by round, and the ratio is per round.
"""

from __future__ import annotations

import os

from harness import alternate, median, write_record
from tag_corpus import one_corpus, one_corpus_parser, tag


def main() -> None:
    args = one_corpus_parser(__doc__, megabytes=0.3).parse_args()
    corpus = one_corpus(args)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray process on 127.0.0.1
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        engines = {"local": (), "ray": ("--engine", "ray", "--ray-address", cluster.address)}
        measured = alternate(
            list(engines), args.rounds, lambda name, _: tag(args.model, corpus, 2, engines[name])
        )
    finally:
        cluster.shutdown()
    ratios = [
        ray["tokens_per_second"] / local["tokens_per_second"]
        for local, ray in zip(measured["local"], measured["ray"], strict=True)
    ]
    medians = {name: median(r["tokens_per_second"] for r in rs) for name, rs in measured.items()}
    medians["ray / local"] = median(ratios)
    write_record(args.out, {"setups": measured, "medians": medians})


if __name__ == "__main__":
    main()
