"""Tagging a raw-text corpus on every core: ``ner-predict --output-dir --jobs 2`` against spaCy's
``nlp.pipe(texts, n_process=2)``, tokens per CPU-second of the whole process tree.

    # once, as for against_spacy.py: spaCy in a scratch environment, our GloVe-only tagger
    python3 -m venv ~/spacy-env && ~/spacy-env/bin/pip install "spacy>=3.8,<3.9"
    .venv/bin/ner-train experiment=conll2003_glove trainer.max_epochs=3 trainer.num_threads=1 \\
        logger=none hydra.run.dir=outputs/glove_only
    .venv/bin/python experiments/bench/corpus_against_spacy.py --model outputs/glove_only/model \\
        --spacy-python ~/spacy-env/bin/python --megabytes 5 --rounds 3 \\
        --out experiments/results/bench/corpus_against_spacy.json

spaCy's efficiency NER pipeline is the one `against_spacy.py` trains on CoNLL-2003 (trained on
the first run into `--workdir`, reused after). The corpus is `tag_corpus.py`'s: CoNLL-2003
sentences as raw text, one per line, cycled to `--megabytes`. Each measurement is one fresh
process tree tagging the whole file and writing every line's entities as JSON lines: ours is
``ner-predict MODEL FILE --output-dir DIR --jobs 2 --threads 1 --quiet`` (its own tokenizer, its
tokens from the summary line); spaCy's is a script in spaCy's environment that reads the lines,
runs ``nlp.pipe(lines, n_process=2, batch_size=--spacy-batch)`` and writes each doc's entities
(text, label, character offsets) as a JSON line (its tokens: the docs' lengths). Both with one
OpenMP/BLAS thread per process. The CPU seconds are the process tree's (the operating system's
usage of the process and every child it waited for: worker processes included); import and model
load are inside, as a user's command has them. The two take turns round by round; the ratios are
per round.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from against_spacy import train_spacy
from harness import (
    REPO,
    alternate,
    corpus_sentences,
    median,
    paired_ratios,
    run_measured,
    write_record,
)
from tag_corpus import SUMMARY, make_corpus

OURS, SPACY = "ours", "spacy"

SPACY_CHILD = """
import json, sys
import spacy
model, corpus, output, batch = sys.argv[1:5]
nlp = spacy.load(model)
with open(corpus, encoding="utf-8") as lines, open(output, "w", encoding="utf-8") as out:
    texts = (line.rstrip("\\n") for line in lines)
    tokens = 0
    for doc in nlp.pipe(texts, n_process=2, batch_size=int(batch)):
        tokens += len(doc)
        ents = [[e.text, e.label_, e.start_char, e.end_char] for e in doc.ents]
        out.write(json.dumps({"text": doc.text, "entities": ents}) + "\\n")
print(json.dumps({"tokens": tokens}))
"""


def one_thread() -> dict[str, str]:
    """This environment with one OpenMP/BLAS thread per process."""
    threads = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return {**os.environ, **dict.fromkeys(threads, "1")}


def figures(done: dict, tokens: int, corpus: Path) -> dict:
    """Tokens and bytes per wall and per CPU second of one measured run."""
    if done["returncode"]:
        raise RuntimeError(f"the run failed:\n{done['stderr'][-3000:]}")
    wall, cpu, size = done["wall_seconds"], done["cpu_seconds"], corpus.stat().st_size
    return {
        "tokens": tokens,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "tokens_per_second": round(tokens / wall),
        "tokens_per_cpu_second": round(tokens / cpu),
        "bytes_per_cpu_second": round(size / cpu),
    }


def run_ours(model: Path, corpus: Path) -> dict:
    with tempfile.TemporaryDirectory() as out:
        command = [str(REPO / ".venv/bin/ner-predict"), str(model), str(corpus)]
        command += ["--output-dir", out, "--jobs", "2", "--threads", "1", "--quiet"]
        done = run_measured(command, env=one_thread(), every=0.5)
        match = SUMMARY.search(done["stderr"])
        if match is None:
            raise RuntimeError(f"ner-predict gave no summary:\n{done['stderr'][-3000:]}")
        return figures(done, int(match.group(1).replace(",", "")), corpus)


def run_spacy(python: str, model: Path, corpus: Path, batch: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        output = str(Path(out) / "entities.jsonl")
        command = [python, "-c", SPACY_CHILD, str(model), str(corpus), output, str(batch)]
        done = run_measured(command, env=one_thread(), every=0.5)
        if done["returncode"]:
            raise RuntimeError(f"spaCy failed:\n{done['stderr'][-3000:]}")
        tokens = json.loads(done["stdout"].strip().splitlines()[-1])["tokens"]
        return figures(done, tokens, corpus)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True, help="our GloVe-only model folder")
    p.add_argument("--spacy-python", required=True, help="an interpreter with spaCy 3.8")
    p.add_argument("--spacy-epochs", type=int, default=5)
    p.add_argument("--spacy-batch", type=int, default=1000, help="nlp.pipe's batch_size")
    p.add_argument("--megabytes", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workdir", type=Path, default=REPO / "outputs" / "against_spacy")
    p.add_argument("--out", type=Path, help="write the record (JSON) here")
    args = p.parse_args()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data = workdir / "conll2003.json"
    if not data.is_file():
        data.write_text(json.dumps(corpus_sentences("conll2003")), encoding="utf-8")
    trained = train_spacy(args.spacy_python, workdir, data, args.spacy_epochs)
    spacy_model = workdir / "spacy-model" / "model-best"
    corpus = make_corpus(workdir / f"corpus-{args.megabytes:g}MB.txt", args.megabytes)

    def measure(name: str, _: int) -> dict:
        if name == OURS:
            return run_ours(args.model.resolve(), corpus)
        return run_spacy(args.spacy_python, spacy_model, corpus, args.spacy_batch)

    measured = alternate([OURS, SPACY], args.rounds, measure)
    keys = ("tokens_per_cpu_second", "bytes_per_cpu_second", "tokens_per_second")
    record = {
        "corpus_bytes": corpus.stat().st_size,
        "processes": 2,
        "spacy_training": trained,
        "measurements": measured,
        "ours_over_spacy": {key: paired_ratios(measured, SPACY, key)[OURS] for key in keys},
    }
    record["median_ours_over_spacy"] = {
        key: median(ratios) for key, ratios in record["ours_over_spacy"].items()
    }
    write_record(args.out, record)


if __name__ == "__main__":
    sys.exit(main())
