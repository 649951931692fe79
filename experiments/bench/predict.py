"""How fast does a tagger predict? Sentences/s of `Tagger` on one corpus split, per set-up.

    .venv/bin/python experiments/bench/predict.py --rounds 2 \\
        --out experiments/results/bench/predict.json
    # against an older version of the code (a checkout: git worktree add --detach OLD_TREE <commit>)
    .venv/bin/python experiments/bench/predict.py --old OLD_TREE --rounds 2 --out ...
    # float32 against bfloat16, one thread against two
    .venv/bin/python experiments/bench/predict.py --precision float32 bfloat16 --threads 1 2 ...

The tagger is the default architecture (conf/model/bilstm_crf.yaml with 50-d words over the
corpus's vocabulary, char-CNN, the ELMo scalar mix over `--bilm`) with random weights from seed 0,
which every tree builds and saves with its own code (speed does not depend on the weight values);
`--model DIR` measures a trained model folder instead. Each measurement is a fresh process that
times `Tagger.load`, `predict_tokens` over the split (pre-tokenized, batches of `--batch-size`),
`predict` over the same sentences as raw text, and `predict` in calls of `--micro-batch` texts
in corpus order (what `ner-serve` tags per model call under 16 one-text clients), in wall time
and in CPU time (with one thread, sentences per CPU-second is what an otherwise idle core gives),
and its peak memory. The set-ups (`--old` and this checkout × `--precision` × `--threads`) take
turns round by round; the per-round ratios to the first set-up are the figures to compare. The
predictions of every set-up are compared with the first one's, tag by tag and confidence by
confidence.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from harness import (
    REPO,
    alternate,
    bilm_folder,
    corpus_sentences,
    default_tagger_spec,
    fresh_process,
    median,
    paired_ratios,
    peak_rss_mb,
    save_default_tagger,
    tree_label,
    write_record,
)

RATES = (
    "pretokenized_sentences_per_second",
    "pretokenized_sentences_per_cpu_second",
    "raw_text_sentences_per_second",
    "raw_text_sentences_per_cpu_second",
    "micro_batches_sentences_per_second",
    "micro_batches_sentences_per_cpu_second",
)


def timed(work) -> tuple[float, float]:
    """Wall and CPU seconds of `work()`."""
    started, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - started, time.process_time() - cpu


def measure(job: dict) -> dict:
    """One measurement, in this process (a fresh one, importing `ner` from the tree measured)."""
    import torch

    from ner import Tagger

    torch.set_num_threads(job["threads"])
    data = json.loads(Path(job["data"]).read_text(encoding="utf-8"))
    model_dir = job["model"] or save_default_tagger(
        data["spec"], data["vocabulary"], Path(job["workdir"]) / "model"
    )
    precision = job["precision"]  # only given to a tree that has the option
    options = {} if precision == "float32" else {"precision": precision}
    started = time.perf_counter()
    tagger = Tagger.load(model_dir, **options)
    load = time.perf_counter() - started
    loaded_peak = peak_rss_mb()
    test, size = data["test"], job["batch_size"]
    texts = [" ".join(s) for s in test]
    tagger.predict_tokens(test[:16])  # warm-up: allocator, lazy imports
    results = []
    tokens = timed(lambda: results.extend(tagger.predict_tokens(test, batch_size=size)))
    text = timed(lambda: tagger.predict(texts, batch_size=size))
    if hasattr(tagger, "_token_vectors"):
        tagger._token_vectors.clear()  # the biLM's char-CNN cache starts empty again
    group = job["micro_batch"]
    micro = timed(
        lambda: [tagger.predict(texts[i : i + group]) for i in range(0, len(texts), group)]
    )
    predictions = [
        [r.tags, [[e.token_start, e.token_end, e.type, e.confidence] for e in r.entities]]
        for r in results
    ]
    Path(job["predictions"]).write_text(json.dumps(predictions), encoding="utf-8")
    figures = {"load_seconds": round(load, 3)}
    for name, (wall, cpu) in (
        ("pretokenized", tokens),
        ("raw_text", text),
        ("micro_batches", micro),
    ):
        figures[f"{name}_sentences_per_second"] = round(len(test) / wall, 1)
        figures[f"{name}_sentences_per_cpu_second"] = round(len(test) / cpu, 1)
    figures["peak_rss_mb_after_load"] = round(loaded_peak)
    figures["peak_rss_mb"] = round(peak_rss_mb())
    return figures


def compare(base_file: Path, other_file: Path) -> dict:
    """Sentences with identical tags, whether the entities (type and tokens) are identical, and
    the largest difference between the confidences of the same entity."""
    base, other = json.loads(base_file.read_text()), json.loads(other_file.read_text())
    pairs = list(zip(base, other, strict=True))
    same = all([e[:3] for e in a[1]] == [e[:3] for e in b[1]] for a, b in pairs)
    gaps = [abs(e[3] - f[3]) for a, b in pairs for e, f in zip(a[1], b[1], strict=False)]
    return {
        "sentences": len(pairs),
        "sentences_with_identical_tags": sum(a[0] == b[0] for a, b in pairs),
        "entities": sum(len(a[1]) for a in base),
        "identical_entities": same,
        "max_confidence_difference": max(gaps, default=0.0),
    }


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    found.add_argument("--corpus", default="conll2003", help="a named corpus or a folder")
    found.add_argument("--split", default="test")
    found.add_argument("--sentences", type=int, help="only the first N sentences of the split")
    found.add_argument(
        "--bilm", default="shipped", help="shipped | fixture | small | medium | original | DIR"
    )
    found.add_argument("--model", type=Path, help="a model folder or shipped tagger instead")
    found.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    found.add_argument("--new", type=Path, default=REPO, help="the checkout measured (default .)")
    found.add_argument(
        "--precision", nargs="+", default=["float32"], choices=["float32", "bfloat16"]
    )
    found.add_argument("--threads", type=int, nargs="+", default=[1])
    found.add_argument("--batch-size", type=int, default=64)
    found.add_argument("--micro-batch", type=int, default=9, help="texts per call (ner-serve's)")
    found.add_argument("--rounds", type=int, default=1)
    found.add_argument("--out", type=Path, help="write the record here")
    found.add_argument("--child", help=argparse.SUPPRESS)  # a measurement's job (JSON)
    return found


def main() -> None:
    args = parser().parse_args()
    if args.child:
        print(json.dumps(measure(json.loads(args.child))))
        return
    setups = {}  # name → (tree, precision, threads)
    if args.old is not None:
        setups["old"] = (args.old, "float32", args.threads[0])
    for precision in args.precision:
        for threads in args.threads:
            name = "new" if precision == "float32" else f"new_{precision}"
            setups[name + (f"_{threads}threads" if len(args.threads) > 1 else "")] = (
                args.new,
                precision,
                threads,
            )
    names = list(setups)
    corpus = corpus_sentences(args.corpus)
    test = corpus[args.split]["tokens"][: args.sentences]
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        bilm = None if args.model else bilm_folder(args.bilm, workdir)
        data = {
            "spec": default_tagger_spec(corpus["train"]["tags"], bilm),
            "vocabulary": [s for split in corpus.values() for s in split["tokens"]],
            "test": test,
        }
        (workdir / "data.json").write_text(json.dumps(data), encoding="utf-8")

        def run(name: str, number: int) -> dict:
            tree, precision, threads = setups[name]
            job = {
                "data": str(workdir / "data.json"),
                "workdir": str(workdir / f"{name}{number}"),
                # a folder, or the name of a shipped tagger (conll2003)
                "model": (str(args.model.resolve()) if args.model.exists() else str(args.model))
                if args.model
                else None,
                "predictions": str(workdir / f"{name}{number}.predictions.json"),
                "precision": precision,
                "threads": threads,
                "batch_size": args.batch_size,
                "micro_batch": args.micro_batch,
            }
            return fresh_process(Path(__file__), ["--child", json.dumps(job)], tree)

        measured = alternate(names, args.rounds, run)
        base = names[0]
        outputs = {
            name: compare(
                workdir / f"{base}0.predictions.json", workdir / f"{name}0.predictions.json"
            )
            for name in names[1:]
        }
    figures = {
        "model": str(args.model)
        if args.model
        else f"default architecture, random weights, {args.bilm} biLM",
        "corpus": f"{args.corpus} {args.split}",
        "sentences": len(test),
        "tokens": sum(map(len, test)),
        "batch_size": args.batch_size,
        "setups": {
            n: {"tree": tree_label(t), "precision": p, "threads": th}
            for n, (t, p, th) in setups.items()
        },
        "runs": measured,
        "median": {
            n: {k: median(r[k] for r in runs) for k in RATES} for n, runs in measured.items()
        },
        f"paired_ratios_over_{base}": {k: paired_ratios(measured, base, k) for k in RATES},
        f"outputs_against_{base}": outputs,
    }
    write_record(args.out, figures)


if __name__ == "__main__":
    sys.exit(main())
