"""Prediction speed: sentences/s batched on CoNLL-2003 test, and model load time.

    .venv/bin/python experiments/bench/predict.py [--bilm fixture|shipped-shape|DIR]
        [--model MODEL_DIR] [--threads 1 2] [--batch-size 64] [--sentences N]

Without ``--model`` it builds a tagger with the default architecture
(conf/model/bilstm_crf.yaml +
conf/embeddings/glove.yaml: GloVe-sized 50-d words over the CoNLL-2003 vocabulary, char-CNN
16/128/3, ELMo scalar mix, 2×200 BiLSTM, constrained CRF) with random weights — speed does not
depend on the weight values — and saves it as a model directory with the chosen biLM:

* ``fixture``: AllenNLP's tiny test biLM (2×64 LSTM, 32-d layers);
* ``shipped-shape``: a biLM of the shipped model's shape (conf/pretrain.yaml ``model``:
  2×512 LSTM, 128-d projections, 512 char filters; random weights), until the trained one exists;
* ``DIR``: a folder with options.json + weights.hdf5 (e.g. the shipped ner/pretrained model).

Timings on a shared machine depend on the other jobs, so each run also records the process's
CPU time: with one thread, sentences per CPU-second is what an otherwise idle core would give.
It then times, per thread count: ``Tagger.load`` in this process, a cold ``Tagger.load`` in a
fresh interpreter (imports included, as ``ner-predict`` pays), and ``predict_tokens`` over the
test split (pre-tokenized, sorted into batches) plus ``predict`` on the same sentences as raw
text (tokenizer and sentence splitter included). Results go to stdout and to ``--out`` as JSON.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml

from ner.bilm.bilm import BiLM
from ner.bilm.options import BiLMOptions
from ner.data import load_corpus
from ner.model.archive import BiLMFiles
from ner.model.tagger import Tagger
from ner.tagger.dataset import Encoder, entity_types, tag_list
from ner.tagger.model import TaggerModel

REPO = Path(__file__).resolve().parents[2]

FIXTURE = REPO.parent / "shared" / "fixtures" / "elmo"


def bilm_files(choice: str, workdir: Path) -> BiLMFiles:
    """The biLM to benchmark with, as files (a random shipped-shape one is written first)."""
    if choice == "fixture":
        return BiLMFiles(str(FIXTURE / "options.json"), str(FIXTURE / "lm_weights.hdf5"), "warm")
    if choice == "shipped-shape":
        shape = yaml.safe_load((REPO / "conf/pretrain.yaml").read_text())["model"]
        torch.manual_seed(0)
        bilm = BiLM(BiLMOptions.from_dict(shape, source="conf/pretrain.yaml"))
        bilm.save(workdir / "options.json", workdir / "weights.hdf5")
        return BiLMFiles(str(workdir / "options.json"), str(workdir / "weights.hdf5"), "warm")
    folder = Path(choice)
    weights = next(p for p in folder.glob("*.hdf5"))
    return BiLMFiles(str(folder / "options.json"), str(weights), "warm")


def build_model(sentences: list[list[str]], tags: list[list[str]], bilm: BiLMFiles, out: Path):
    """A default-architecture tagger with random weights, saved as a model directory."""
    model_conf = yaml.safe_load((REPO / "conf/model/bilstm_crf.yaml").read_text())
    embeddings = yaml.safe_load((REPO / "conf/embeddings/glove.yaml").read_text())
    model_conf.pop("_target_")
    options = BiLMOptions.from_file(bilm.options)
    labels = tag_list(entity_types(tags), model_conf["tag_scheme"])
    encoder = Encoder.build(sentences, labels, max_chars=embeddings["char"]["max_chars"])
    torch.manual_seed(0)
    model = TaggerModel(
        **model_conf,
        tags=labels,
        num_words=len(encoder.words),
        word_dim=embeddings["glove"]["dim"],
        num_chars=len(encoder.chars),
        char_dim=embeddings["char"]["dim"],
        char_filters=embeddings["char"]["filters"],
        char_width=embeddings["char"]["width"],
        elmo_dim=options.output_dim,
        elmo_layers=options.num_layers,
    )
    return Tagger(model, encoder, bilm).save(out, config={"benchmark": "random weights"})


def cold_load_seconds(model_dir: Path, threads: int) -> float:
    """Wall time of importing ner and loading the model in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import torch; "
        f"torch.set_num_threads({threads}); from ner import Tagger; "
        f"Tagger.load({str(model_dir)!r}); print(time.perf_counter() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bilm", default="fixture", help="fixture | shipped-shape | DIR")
    parser.add_argument("--model", type=Path, help="a trained model directory instead")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--sentences", type=int, help="only the first N test sentences")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()

    corpus = load_corpus("conll2003")
    names = corpus["test"].features["tags"].feature.names
    test = [list(tokens) for tokens in corpus["test"]["tokens"]][: args.sentences]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        model_dir = args.model
        if model_dir is None:
            train = corpus["train"]
            everything = [list(t) for split in corpus.values() for t in split["tokens"]]
            gold = [[names[i] for i in row] for row in train["tags"]]
            model_dir = build_model(everything, gold, bilm_files(args.bilm, workdir), workdir / "m")
        results = {
            "model": str(args.model) if args.model else f"default architecture, {args.bilm} biLM",
            "sentences": len(test),
            "tokens": sum(len(s) for s in test),
            "batch_size": args.batch_size,
            "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg()[0],
            "runs": [],
        }
        texts = [" ".join(tokens) for tokens in test]
        for threads in args.threads:
            torch.set_num_threads(threads)
            started = time.perf_counter()
            tagger = Tagger.load(model_dir)
            load = time.perf_counter() - started
            tagger.predict_tokens(test[:16], batch_size=args.batch_size)  # warm state, allocator
            started, cpu_started = time.perf_counter(), time.process_time()
            tagger.predict_tokens(test, batch_size=args.batch_size)
            tokens_seconds = time.perf_counter() - started
            cpu_seconds = time.process_time() - cpu_started
            started = time.perf_counter()
            tagger.predict(texts, batch_size=args.batch_size)
            text_seconds = time.perf_counter() - started
            run = {
                "threads": threads,
                "load_seconds": round(load, 3),
                "cold_load_seconds": round(cold_load_seconds(model_dir, threads), 3),
                "pretokenized_sentences_per_second": round(len(test) / tokens_seconds, 1),
                "raw_text_sentences_per_second": round(len(test) / text_seconds, 1),
                "tokens_per_second": round(results["tokens"] / tokens_seconds),
                # CPU time of this process (all its threads): with 1 thread, what an idle core gives
                "pretokenized_sentences_per_cpu_second": round(len(test) / cpu_seconds, 1),
            }
            results["runs"].append(run)
            print(json.dumps(run), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
