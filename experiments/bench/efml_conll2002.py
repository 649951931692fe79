"""Does a non-English corpus run end to end on an ELMoForManyLangs-format biLM?

    nice -n 10 .venv/bin/python experiments/bench/efml_conll2002.py --sentences 200 --epochs 2 \\
        --out experiments/results/bench/efml_conll2002.json

CoNLL-2002 Spanish and Dutch (``data=conll2002_es``, ``conll2002_nl``) go through ``ner-train``
with ``elmo=folder elmo.path=DIR elmo.state=stateless`` (word vectors trained from scratch,
``embeddings=words``: GloVe is English), then ``ner-predict`` tags raw test sentences with the saved
model folder. No published ELMoForManyLangs weights can be downloaded where this was measured, so
DIR is a random model of the published shape (the architecture every published model names:
2048 filters, 2 highways, 100-d words, 4096-cell LSTMs projected to 512), written by this script
in the format's own layout (config.json, char.dic, word.dic, token_embedder.pkl, encoder.pkl),
its dictionaries the characters and words of both training splits. The F1 of such a run says
nothing about ELMo; the run shows that the path works and what it costs. Each run is one fresh
process on ``--threads`` threads; the record holds its scores, seconds (the feature cache
included) and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from collections import Counter
from pathlib import Path

import torch
from harness import REPO, run_measured, write_record

from ner.bilm.efml import CHAR_SPECIALS, PUBLISHED_ARCHITECTURE, WORD_SPECIALS
from ner.bilm.load import load_bilm
from ner.data import prepare_corpus

LANGUAGES = ("es", "nl")


def dictionaries() -> tuple[list[str], list[str]]:
    """The characters and words of both whole training splits, specials first, as a model's
    char.dic and word.dic list them."""
    chars: Counter[str] = Counter()
    words: Counter[str] = Counter()
    for language in LANGUAGES:
        corpus, _ = prepare_corpus(f"conll2002_{language}")
        for tokens in corpus["train"]["tokens"]:
            words.update(tokens)
            chars.update(c for token in tokens for c in token)
    return [*CHAR_SPECIALS, *sorted(chars)], [*WORD_SPECIALS, *sorted(words)]


def random_tensor(generator: torch.Generator, *shape: int, fan_in: int) -> torch.Tensor:
    return torch.randn(*shape, generator=generator) / fan_in**0.5


def write_random_model(folder: Path, chars: list[str], words: list[str], seed: int = 0) -> None:
    """A random model of the published shape, in the ELMoForManyLangs layout."""
    embedder, encoder = PUBLISHED_ARCHITECTURE["token_embedder"], PUBLISHED_ARCHITECTURE["encoder"]
    g = torch.Generator().manual_seed(seed)
    filters = sum(count for _, count in embedder["filters"])
    char_dim, word_dim = embedder["char_dim"], embedder["word_dim"]
    proj, hidden = encoder["projection_dim"], encoder["dim"]
    tokens = {
        "word_emb_layer.embedding.weight": random_tensor(g, len(words), word_dim, fan_in=1),
        "char_emb_layer.embedding.weight": random_tensor(g, len(chars), char_dim, fan_in=1),
        "projection.weight": random_tensor(g, proj, word_dim + filters, fan_in=word_dim + filters),
        "projection.bias": torch.zeros(proj),
    }
    for i, (width, count) in enumerate(embedder["filters"]):
        weight = random_tensor(g, count, char_dim, width, fan_in=char_dim * width)
        tokens |= {f"convolutions.{i}.weight": weight, f"convolutions.{i}.bias": torch.zeros(count)}
    for k in range(embedder["n_highway"]):
        tokens[f"highways._layers.{k}.weight"] = random_tensor(
            g, 2 * filters, filters, fan_in=filters
        )
        tokens[f"highways._layers.{k}.bias"] = torch.zeros(2 * filters)
    lstm = {}
    for layer in range(encoder["n_layers"]):
        for direction in ("forward", "backward"):
            prefix = f"{direction}_layer_{layer}"
            lstm[f"{prefix}.input_linearity.weight"] = random_tensor(
                g, 4 * hidden, proj, fan_in=proj
            )
            lstm[f"{prefix}.state_linearity.weight"] = random_tensor(
                g, 4 * hidden, proj, fan_in=proj
            )
            lstm[f"{prefix}.state_linearity.bias"] = torch.zeros(4 * hidden)
            lstm[f"{prefix}.state_projection.weight"] = random_tensor(
                g, proj, hidden, fan_in=hidden
            )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(
        json.dumps({"config_path": "cnn_50_100_512_4096_sample.json"}), encoding="utf-8"
    )
    for name, entries in (("char.dic", chars), ("word.dic", words)):
        lines = "".join(f"{entry}\t{i}\n" for i, entry in enumerate(entries))
        (folder / name).write_text(lines, encoding="utf-8")
    torch.save(tokens, folder / "token_embedder.pkl")
    torch.save(lstm, folder / "encoder.pkl")


def run_language(language: str, model: Path, args: argparse.Namespace, root: Path) -> dict:
    """ner-train, then ner-predict on raw test sentences: scores, seconds, memory."""
    run_dir = root / language
    train = [
        sys.executable,
        "-m",
        "ner.cli.train",
        f"data=conll2002_{language}",
        f"data.max_sentences={args.sentences}",
        "embeddings=words",
        "elmo=folder",
        f"elmo.path={model}",
        "elmo.state=stateless",
        f"trainer.max_epochs={args.epochs}",
        f"trainer.num_threads={args.threads}",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={run_dir}",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    print(f"{language}: training in {run_dir}", file=sys.stderr, flush=True)
    trained = run_measured(train, cwd=REPO, env=env)
    if trained["returncode"]:
        raise RuntimeError(f"{shlex.join(train)}:\n{trained['stderr'][-3000:]}")
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    corpus, _ = prepare_corpus(f"conll2002_{language}")
    texts = [" ".join(tokens) for tokens in corpus["test"]["tokens"][:3]]
    (root / f"{language}.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    predict = [
        sys.executable,
        "-m",
        "ner.cli.predict",
        str(run_dir / "model"),
        str(root / f"{language}.txt"),
    ]
    print(f"{language}: tagging {len(texts)} test sentences", file=sys.stderr, flush=True)
    predicted = run_measured(predict, cwd=REPO, env=env)
    if predicted["returncode"]:
        raise RuntimeError(f"{shlex.join(predict)}:\n{predicted['stderr'][-3000:]}")
    tagged = [json.loads(line) for line in predicted["stdout"].splitlines()]
    seconds = results["time_seconds"]
    return {
        "train_command": "ner-train " + shlex.join(train[3:-1]).replace(str(model), "DIR"),
        "sentences": results["sentences"],
        "dev_f1": results["dev"]["f1"],
        "test_f1": results["test"]["f1"],
        "elmo_features_seconds": round(seconds.get("elmo_features", 0.0), 1),
        "train_total_seconds": round(trained["wall_seconds"], 1),
        "train_cpu_seconds": round(trained["cpu_seconds"], 1),
        "train_peak_rss_mb": round(trained["peak_rss_mb"]),
        "predict_seconds": round(predicted["wall_seconds"], 1),
        "predicted_texts": len(tagged),
        "predicted_entities": sum(len(text["entities"]) for text in tagged),
        "first_prediction": {"text": tagged[0]["text"], "entities": tagged[0]["entities"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=200, help="first N of each split")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", type=Path, help="the biLM folder (default: a random one)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="efml-conll2002-") as scratch:
        root = Path(scratch)
        model = args.model
        if model is None:
            model = root / "random_published_shape"
            print(f"writing a random model of the published shape in {model}", file=sys.stderr)
            write_random_model(model, *dictionaries())
        bilm = load_bilm(model)  # every tensor checked against the published shape
        parameters = sum(p.numel() for p in bilm.parameters())
        words = 0 if bilm.word_vectors is None else bilm.word_vectors.num_embeddings
        del bilm
        figures = {
            "bilm": str(args.model) if args.model else "random, published ELMoForManyLangs shape",
            "bilm_parameters_as_loaded": parameters,
            "bilm_words": words,
            "threads": args.threads,
            "runs": {language: run_language(language, model, args, root) for language in LANGUAGES},
        }
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
