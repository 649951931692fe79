"""How fast do we run an ELMoForManyLangs model against the package itself (its `Embedder`)?

Both run, one after the other in one invocation, the same random model of the published shape
(cnn_50_100_512_4096_sample.json: 2048 filters, 2 highways, 100-d words, 4096-cell LSTMs projected
to 512; the real weights cannot be downloaded here and speed does not depend on them) over the
same synthetic sentences on the same number of threads. The model folder is built and saved by the
package's own classes (`biLM.Model`, `save_model`), in the package's scratch environment:

    python3 -m venv /tmp/efml-venv
    /tmp/efml-venv/bin/pip install torch==2.13.0
    /tmp/efml-venv/bin/pip install elmoformanylangs==0.0.4.post2 overrides==3.1.0
    .venv/bin/python experiments/bench/efml_speed.py --package-python /tmp/efml-venv/bin/python \\
        --sentences 200 --threads 1 --out experiments/results/bench/efml_speed.json

The package runs batches of 64 sentences (its default), ours `embed_sentences` in `stateless`
mode (sorted batches of at most 8192 padded tokens). Tokens/s count words, boundaries excluded.
Prints one JSON record (`harness.write_record`), written to --out when given.
"""

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

ALPHABET = "abcdefghijklmnopqrstuvwxyzäöüéñçABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,-"


def synthetic_sentences(count: int, seed: int = 1) -> list[list[str]]:
    """`count` sentences of 5-40 words drawn, Zipf-like, from 5,000 random words of 1-14 chars."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(ALPHABET, k=rng.randint(1, 14))) for _ in range(5000)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    return [rng.choices(words, weights, k=rng.randint(5, 40)) for _ in range(count)]


def run_package(folder: Path, sentences: list[list[str]], threads: int) -> dict[str, float]:
    """In the package's environment: build the model folder if missing, time `Embedder`."""
    import elmoformanylangs
    import torch
    from elmoformanylangs import Embedder
    from elmoformanylangs.biLM import Model
    from elmoformanylangs.modules.embedding_layer import EmbeddingLayer

    torch.set_num_threads(threads)
    if not (folder / "encoder.pkl").exists():
        words = {w: i for i, w in enumerate(["<oov>", "<bos>", "<eos>", "<pad>"])}
        chars: dict[str, int] = {}
        for sentence in sentences:
            for word in sentence:
                words.setdefault(word, len(words))
                for char in word:
                    chars.setdefault(char, len(chars))
        for special in ["<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"]:
            chars.setdefault(special, len(chars))
        config = {"config_path": "cnn_50_100_512_4096_sample.json"}
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        for name, table in (("char.dic", chars), ("word.dic", words)):
            lines = "".join(f"{entry}\t{i}\n" for entry, i in table.items())
            (folder / name).write_text(lines, encoding="utf-8")
        shipped = Path(elmoformanylangs.__file__).parent / "configs" / config["config_path"]
        architecture = json.loads(shipped.read_text(encoding="utf-8"))
        model = Model(
            architecture,
            EmbeddingLayer(100, words, fix_emb=False),
            EmbeddingLayer(50, chars, fix_emb=False),
            len(words),
        )
        model.save_model(str(folder), False)
        del model
    embedder = Embedder(str(folder), batch_size=64)
    started, cpu = time.perf_counter(), time.process_time()
    with torch.no_grad():
        embedder.sents2elmo(sentences, output_layer=-2)
    return {"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def run_ours(folder: Path, sentences: list[list[str]], threads: int) -> dict[str, float]:
    """`load_bilm(folder, "stateless").embed_sentences`, timed."""
    import torch

    from ner.bilm.load import load_bilm

    torch.set_num_threads(threads)
    bilm = load_bilm(folder, state="stateless").eval()
    started, cpu = time.perf_counter(), time.process_time()
    bilm.embed_sentences(sentences)
    return {"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package-python", help="the python of the package's environment")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the record here")
    parser.add_argument("--package-side", type=Path, help=argparse.SUPPRESS)  # the child's role
    args = parser.parse_args()
    sentences = synthetic_sentences(args.sentences)
    if args.package_side:
        print(json.dumps(run_package(args.package_side, sentences, args.threads)))
        return
    tokens = sum(map(len, sentences))
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        child = [args.package_python, __file__, "--package-side", str(folder)]
        child += ["--sentences", str(args.sentences), "--threads", str(args.threads)]
        output = subprocess.run(child, check=True, capture_output=True, text=True).stdout
        timings = {"package": json.loads(output.strip().splitlines()[-1])}
        timings["ours"] = run_ours(folder, sentences, args.threads)
    record = {"sentences": len(sentences), "tokens": tokens, "threads": args.threads}
    for name, timing in timings.items():
        record[name] = {**timing, "tokens_per_s": tokens / timing["wall_s"]}
        record[name]["tokens_per_cpu_s"] = tokens / timing["cpu_s"]
    record["speedup_wall"] = timings["package"]["wall_s"] / timings["ours"]["wall_s"]
    from harness import write_record  # here: the package's environment lacks what it imports

    write_record(args.out, record)


if __name__ == "__main__":
    main()
