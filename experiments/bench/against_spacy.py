"""Is our GloVe-only tagger as fast as spaCy's NER? Tokens/s side by side on CoNLL-2003 test.

    # once: spaCy in a scratch environment (not a dependency of this package)
    python3 -m venv /tmp/spacy-env && /tmp/spacy-env/bin/pip install "spacy>=3.8,<3.9"
    # a GloVe-only tagger of ours (the default architecture without ELMo)
    .venv/bin/ner-train experiment=conll2003_glove trainer.max_epochs=10 trainer.num_threads=1 \\
        logger=none hydra.run.dir=outputs/glove_only
    .venv/bin/python experiments/bench/against_spacy.py --model outputs/glove_only/model \\
        --spacy-python /tmp/spacy-env/bin/python --rounds 7 --bfloat16 \\
        --out experiments/results/bench/against_spacy.json

The first run trains spaCy's NER pipeline on CoNLL-2003 train (`spacy init config --pipeline ner
--optimize efficiency`, the CPU-efficient tok2vec, scored on dev; `--spacy-epochs` epochs, one
thread) into `--workdir`; later runs reuse it. Each measurement is a fresh process on one thread
that times the import, the load, and tagging the 3,453 pre-tokenized test sentences (our
`Tagger.predict_tokens`; spaCy's `nlp.pipe` over `Doc`s built from the same tokens), after a
warm-up on 16 of them; the two take turns round by round. Both taggers' predictions are scored
by the same seqeval call against the gold tags, and each round's predictions are checked to be
identical to the first round's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness import (
    REPO,
    alternate,
    corpus_sentences,
    fresh_process,
    matmul_peak,
    median,
    paired_ratios,
    peak_rss_mb,
    write_record,
)

SCRIPT = Path(__file__).resolve()
OURS, OURS_BF16, SPACY = "ours", "ours_bfloat16", "spacy"


# --- in the measured process --------------------------------------------------------------


def measure_ours(job: dict) -> dict:
    """Our tagger: import, load, tag the pre-tokenized sentences (in this checkout's env)."""
    started = time.perf_counter()
    import torch

    from ner import Tagger

    imported = time.perf_counter() - started
    torch.set_num_threads(1)
    tokens = json.loads(Path(job["test"]).read_text(encoding="utf-8"))
    started = time.perf_counter()
    tagger = Tagger.load(job["model"], precision=job.get("precision", "float32"))
    loaded = time.perf_counter() - started
    tagger.predict_tokens(tokens[:16])  # warm-up: allocator, lazy imports
    results: list = []
    wall, cpu = timed(lambda: results.extend(tagger.predict_tokens(tokens, batch_size=64)))
    Path(job["predictions"]).write_text(json.dumps([r.tags for r in results]), encoding="utf-8")
    return {
        **figures(tokens, imported, loaded, wall, cpu),
        "lstm_gflop": round(lstm_flop(tagger.model.config) * sum(map(len, tokens)) / 1e9, 1),
        "matmul_peak_gflop_per_cpu_second": round(matmul_peak(), 1),
    }


def lstm_flop(config: dict) -> float:
    """Floating-point operations per token of the tagger's BiLSTM: per layer and direction,
    the four gates' products with the input and the previous state."""
    inputs = (
        config["word_dim"] * bool(config["num_words"])
        + config["char_filters"] * bool(config["num_chars"])
        + config["elmo_dim"]
    )
    hidden, total = config["hidden_size"], 0.0
    for _ in range(config["num_layers"]):
        total += 2 * 2 * 4 * hidden * (inputs + hidden)  # 2 directions, multiply-add = 2
        inputs = 2 * hidden
    return total


def measure_spacy(job: dict) -> dict:
    """spaCy's pipeline: the same steps (in the scratch environment's interpreter)."""
    started = time.perf_counter()
    import spacy
    from spacy.tokens import Doc

    imported = time.perf_counter() - started
    tokens = json.loads(Path(job["test"]).read_text(encoding="utf-8"))
    started = time.perf_counter()
    nlp = spacy.load(job["model"])
    loaded = time.perf_counter() - started
    list(nlp.pipe(Doc(nlp.vocab, words=words) for words in tokens[:16]))  # warm-up
    docs: list = []
    wall, cpu = timed(
        lambda: docs.extend(nlp.pipe(Doc(nlp.vocab, words=words) for words in tokens))
    )
    tags = [[f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "O" for t in doc] for doc in docs]
    Path(job["predictions"]).write_text(json.dumps(tags), encoding="utf-8")
    return figures(tokens, imported, loaded, wall, cpu)


def timed(work) -> tuple[float, float]:
    """Wall and CPU seconds of `work()`."""
    started, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - started, time.process_time() - cpu


def figures(tokens: list, imported: float, loaded: float, wall: float, cpu: float) -> dict:
    count = sum(len(sentence) for sentence in tokens)
    return {
        "import_seconds": round(imported, 2),
        "load_seconds": round(loaded, 2),
        "tag_seconds": round(wall, 2),
        "tokens_per_second": round(count / wall),
        "tokens_per_cpu_second": round(count / cpu),
        "peak_rss_mb": round(peak_rss_mb()),
    }


def convert_for_spacy(job: dict) -> None:
    """train.spacy and dev.spacy (DocBin) from the corpus's tokens and IOB tags."""
    import spacy
    from spacy.tokens import Doc, DocBin

    nlp = spacy.blank("en")
    data = json.loads(Path(job["data"]).read_text(encoding="utf-8"))
    for split in ("train", "validation"):
        docs = DocBin()
        for words, tags in zip(data[split]["tokens"], data[split]["tags"], strict=True):
            docs.add(Doc(nlp.vocab, words=words, ents=iob2(tags)))
        docs.to_disk(Path(job["workdir"]) / f"{split}.spacy")


def iob2(tags: list[str]) -> list[str]:
    """IOB tags with every chunk opened by B- (an I- after O or another type starts one)."""
    return [
        "B-" + tag[2:] if tag.startswith("I-") and previous[2:] != tag[2:] else tag
        for previous, tag in zip(["O", *tags], tags, strict=False)
    ]


CHILDREN = {OURS: measure_ours, SPACY: measure_spacy, "convert": convert_for_spacy}


# --- the comparison ---------------------------------------------------------------------------


def train_spacy(python: str, workdir: Path, data: Path, epochs: int) -> dict:
    """spaCy's efficiency NER pipeline trained on train, selected on dev; its training time."""
    record = workdir / "spacy-model" / "training.json"
    if record.is_file():
        return json.loads(record.read_text())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    job = json.dumps({"data": str(data), "workdir": str(workdir)})
    subprocess.run([python, str(SCRIPT), "--child", "convert", "--job", job], check=True, env=env)
    config = workdir / "spacy.cfg"
    spacy = [python, "-m", "spacy"]
    init = ["init", "config", str(config), "--lang", "en", "--pipeline", "ner"]
    subprocess.run([*spacy, *init, "--optimize", "efficiency", "--force"], check=True, env=env)
    paths = {"--paths.train": "train.spacy", "--paths.dev": "validation.spacy"}
    settings = {
        **{flag: str(workdir / name) for flag, name in paths.items()},
        "--training.max_epochs": str(epochs),
        "--training.max_steps": "0",
        "--system.seed": "1",
    }
    started = time.perf_counter()
    output = ["--output", str(workdir / "spacy-model")]
    flags = [part for pair in settings.items() for part in pair]
    subprocess.run([*spacy, "train", str(config), *output, *flags], check=True, env=env)
    trained = {"epochs": epochs, "training_seconds": round(time.perf_counter() - started)}
    record.write_text(json.dumps(trained))
    return trained


def f1(gold: list[list[str]], predictions: Path) -> float:
    """Test F1 (seqeval's conlleval-compatible chunks), in percent."""
    from seqeval.metrics import f1_score

    return round(100 * f1_score(gold, json.loads(predictions.read_text())), 2)


def bfloat16_agreement(workdir: Path, names: list[str]) -> int | None:
    """Test sentences whose tags are the same in bfloat16 as in float32 (None: not measured)."""
    if OURS_BF16 not in names:
        return None
    tags = [json.loads((workdir / f"{name}_round0.json").read_text()) for name in (OURS, OURS_BF16)]
    return sum(a == b for a, b in zip(*tags, strict=True))


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.child:
        result = CHILDREN[args.child](json.loads(args.job))
        print(json.dumps(result or {}), flush=True)
        return
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data = workdir / "conll2003.json"
    sentences = corpus_sentences("conll2003")
    data.write_text(json.dumps(sentences), encoding="utf-8")
    # what a measured process reads: the test tokens alone, so that neither peak holds the corpus
    test = workdir / "test_tokens.json"
    test.write_text(json.dumps(sentences["test"]["tokens"]), encoding="utf-8")
    trained = train_spacy(args.spacy_python, workdir, data, args.spacy_epochs)
    ours = str(args.model.resolve())
    jobs = {
        OURS: (sys.executable, {"model": ours}),
        OURS_BF16: (sys.executable, {"model": ours, "precision": "bfloat16"}),
        SPACY: (args.spacy_python, {"model": str(workdir / "spacy-model" / "model-best")}),
    }
    names = [OURS, SPACY, *([OURS_BF16] if args.bfloat16 else [])]

    def measure(name: str, number: int) -> dict:
        python, job = jobs[name]
        job = {**job, "test": str(test), "predictions": str(workdir / f"{name}_round{number}.json")}
        child = SPACY if name == SPACY else OURS
        return fresh_process(SCRIPT, ["--child", child, "--job", json.dumps(job)], python=python)

    measured = alternate(names, args.rounds, measure)
    gold = sentences["test"]["tags"]
    record = {
        "test_sentences": len(gold),
        "test_tokens": sum(len(tags) for tags in gold),
        "threads": 1,
        "spacy_training": trained,
        "test_f1": {name: f1(gold, workdir / f"{name}_round0.json") for name in names},
        "bfloat16_sentences_with_the_float32_tags": bfloat16_agreement(workdir, names),
        "same_predictions_every_round": {
            name: all(
                (workdir / f"{name}_round{n}.json").read_text()
                == (workdir / f"{name}_round0.json").read_text()
                for n in range(args.rounds)
            )
            for name in names
        },
        "measurements": measured,
        "medians": {
            name: {key: median(r[key] for r in results) for key in results[0]}
            for name, results in measured.items()
        },
        "over_spacy": {
            key: paired_ratios(measured, SPACY, key)
            for key in ("tokens_per_cpu_second", "tokens_per_second")
        },
    }
    write_record(args.out, record)


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    found.add_argument("--model", type=Path, help="our trained model folder (GloVe-only)")
    found.add_argument("--spacy-python", help="the interpreter of an environment with spaCy")
    found.add_argument("--spacy-epochs", type=int, default=5)
    found.add_argument("--workdir", type=Path, default=REPO / "outputs" / "against_spacy")
    found.add_argument("--rounds", type=int, default=3)
    found.add_argument("--bfloat16", action="store_true", help="ours in bfloat16 too")
    found.add_argument("--out", type=Path, help="write the record here")
    found.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    found.add_argument("--job", help=argparse.SUPPRESS)
    return found


if __name__ == "__main__":
    main()
