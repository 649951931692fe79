"""What every benchmark of this folder shares (imported by them, not run).

- `matmul_peak`: the core's matrix-product rate in GFLOP per CPU-second, the yardstick for
  "how close to the hardware" figures;
- `memory_mb`, `run_measured`: current and peak resident memory of this process, and the peak
  memory, CPU time and wall time of a child process;
- `alternate`, `fresh_process`, `paired_ratios`: set-ups (two trees of the code, two precisions,
  two settings) measured in fresh processes, taking turns round by round, so that a load that
  changes during the run hits all of them alike; each round's ratio is the figure to read;
- `write_record`: the JSON record of a benchmark: the command, the machine, when, and the
  figures, written atomically;
- `random_bilm`, `default_tagger`: the models the benchmarks measure: an untrained biLM of a given
  shape, and a tagger of the default architecture with random weights (speed does not depend on
  the weight values) saved as a model folder.

Scripts import it as ``from harness import ...`` (their own folder is first on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).resolve().parent
RESULTS = REPO / "experiments" / "results" / "bench"
SHIPPED_BILM = REPO / "ner" / "pretrained" / "elmo-small-news"
PUBLISHED_SHAPES = BENCH / "published_shapes.yaml"
FIXTURE_BILM = REPO / "tests" / "fixtures" / "elmo"


# --- the machine ---------------------------------------------------------------------------


def matmul_peak(
    dtype: str = "float32", size: int = 2048, repeats: int = 6, wall: bool = False
) -> float:
    """Best GFLOP per CPU-second of this thread over `repeats` (size × size) @ (size × size)
    products in `dtype` ("float32" or "bfloat16"). CPU time, not wall time, so that other jobs
    taking turns on the core do not lower it; call it in the process being measured, with its
    thread setting, right before and after the work, and keep the larger figure. `wall=True`:
    GFLOP per second of wall time instead, the rate of all of torch's threads together."""
    import torch

    kind = getattr(torch, dtype)
    a, b = torch.randn(size, size).to(kind), torch.randn(size, size).to(kind)
    out = torch.empty(size, size, dtype=kind)
    torch.mm(a, b, out=out)  # kernels, allocator
    best = 0.0
    clock = time.perf_counter if wall else time.thread_time
    for _ in range(repeats):
        started = clock()
        torch.mm(a, b, out=out)
        seconds = max(clock() - started, 1e-9)
        best = max(best, 2 * size**3 / seconds / 1e9)
    return best


def machine() -> dict:
    """What a figure depends on besides the code: CPU, cores, load, library versions."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    facts = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }
    try:
        import torch

        facts["torch"] = torch.__version__
    except ImportError:
        pass
    return facts


# --- memory and CPU time ---------------------------------------------------------------------


def memory_mb(pid: int | str = "self") -> tuple[float, float] | None:
    """Current and peak resident memory (VmRSS, VmHWM) of process `pid` in MB; None once it has
    exited (or is a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except (FileNotFoundError, ProcessLookupError):
        return None
    if "VmRSS" not in fields:
        return None
    current, peak = (int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))
    return current, peak


def peak_rss_mb() -> float:
    """The peak resident memory of this process so far, in MB (VmHWM: since its exec, unlike
    ``ru_maxrss``, which also counts the parent's memory the process was forked with)."""
    reading = memory_mb()
    return reading[1] if reading else 0.0


def run_measured(
    command: list[str], *, cwd: Path | None = None, env: dict | None = None, every: float = 0.05
) -> dict:
    """Run `command` to its end; its exit code, output, wall seconds, CPU seconds and peak
    resident memory: the largest VmHWM read every `every` seconds while it runs (the operating
    system's ``ru_maxrss`` of a child would include the memory of this process, copied at fork;
    a rise in the child's last moments can be missed)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        peak = 0.0
        while True:
            reading = memory_mb(process.pid)  # after Popen returns, the child has exec'd
            if reading is not None:
                peak = max(peak, reading[1])
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(every)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return {
            "returncode": process.returncode,
            "stdout": out.read(),
            "stderr": err.read(),
            "wall_seconds": wall,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": peak,
        }


# --- set-ups taking turns ---------------------------------------------------------------------


def fresh_process(
    script: Path, args: Iterable[str], tree: Path | None = None, python: str = sys.executable
) -> dict:
    """Run `script` (a file of this checkout) with `args` in a fresh interpreter (`python`: of
    another environment) that imports `ner` from `tree` (default: this checkout), one OpenMP
    thread unless the caller's environment says otherwise; the JSON object its last line of
    output prints, with the process's peak memory and CPU time added."""
    tree = (tree or REPO).resolve()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.setdefault("OMP_NUM_THREADS", "1")
    done = run_measured([python, str(script), *args], cwd=tree, env=env)
    if done["returncode"]:
        raise RuntimeError(f"{script.name} in {tree} failed:\n{done['stderr'][-3000:]}")
    lines = done["stdout"].strip().splitlines()
    if not lines:
        raise RuntimeError(f"{script.name} in {tree} printed nothing:\n{done['stderr'][-3000:]}")
    return {
        **json.loads(lines[-1]),
        "process_peak_rss_mb": round(done["peak_rss_mb"]),
        "process_cpu_seconds": round(done["cpu_seconds"], 2),
    }


def tree_label(tree: Path) -> str:
    """How a record names a checkout of the code: "." for this one, else its folder's name (no
    machine paths in the records)."""
    return "." if tree.resolve() == REPO else tree.resolve().name


def alternate(
    names: list[str], rounds: int, measure: Callable[[str, int], dict]
) -> dict[str, list[dict]]:
    """`measure(name, round)` for every set-up in every round, in turns: round 0 in the given
    order, round 1 reversed, and so on, so that no set-up is always measured first or last.
    Prints each measurement as it ends; returns name → one result per round."""
    measured: dict[str, list[dict]] = {name: [] for name in names}
    for number in range(rounds):
        for name in names[:: -1 if number % 2 else 1]:
            result = measure(name, number)
            measured[name].append(result)
            print(json.dumps({"round": number + 1, "setup": name, **result}), flush=True)
    return measured


def paired_ratios(
    measured: dict[str, list[dict]], base: str, key: str
) -> dict[str, list[float | None]]:
    """Per round, each set-up's `key` over the base set-up's (measured back to back, which
    cancels most of a load that changes between rounds)."""
    return {
        name: [
            round(r[key] / b[key], 3) if b.get(key) else None
            for r, b in zip(results, measured[base], strict=True)
        ]
        for name, results in measured.items()
        if name != base
    }


def median(values: Iterable[float | None]) -> float | None:
    import statistics

    present = [v for v in values if v is not None]
    return round(statistics.median(present), 3) if present else None


# --- records ------------------------------------------------------------------------------


def command_line(argv: list[str] | None = None) -> str:
    """The command that is running, as a user would type it from the repository root."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    try:
        shown = script.relative_to(REPO).as_posix()
    except ValueError:
        shown = argv[0]
    return shlex.join([".venv/bin/python", shown, *argv[1:]])


def write_record(path: Path | None, figures: dict, argv: list[str] | None = None) -> dict:
    """The record of a benchmark: its command, the machine, the time and `figures`; printed, and
    written atomically to `path` when given."""
    from ner.common.files import write_json

    record = {
        "command": command_line(argv),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        **figures,
    }
    print(json.dumps(record, indent=1), flush=True)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, record, indent=1)
    return record


# --- models -------------------------------------------------------------------------------


def published_shape(name: str) -> dict:
    """options.json of one of AllenNLP's published ELMo shapes (published_shapes.yaml)."""
    import yaml

    shapes = yaml.safe_load(PUBLISHED_SHAPES.read_text())
    if name not in shapes:
        raise SystemExit(f"no published shape {name!r}; have {sorted(shapes)}")
    return shapes[name]


def random_bilm(options: dict, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """A biLM of the shape `options` (options.json as a dict) with random weights, written to
    `folder`: (options.json, weights.hdf5). Same compute as a trained one."""
    import torch

    from ner.bilm.bilm import BiLM
    from ner.bilm.options import BiLMOptions

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    BiLM(BiLMOptions.from_dict(options, source="benchmark shape")).save(
        folder / "options.json", folder / "weights.hdf5"
    )
    return folder / "options.json", folder / "weights.hdf5"


def bilm_folder(choice: str, workdir: Path) -> Path:
    """The biLM a benchmark runs, as a folder with options.json and one .hdf5 file: ``fixture``
    (the tests' tiny biLM), ``shipped`` (ner/pretrained/elmo-small-news), a published shape
    (``small``, ``medium``, ``original``: random weights), or a folder."""
    if choice == "fixture":
        return FIXTURE_BILM
    if choice == "shipped":
        return SHIPPED_BILM
    if choice in ("small", "medium", "original"):
        random_bilm(published_shape(choice), workdir / f"bilm-{choice}")
        return workdir / f"bilm-{choice}"
    return Path(choice)


def bilm_files(folder: Path) -> tuple[Path, Path]:
    """(options.json, weights file) of a biLM folder."""
    named = [folder / name for name in ("weights.hdf5", "lm_weights.hdf5")]
    weights = [path for path in named if path.is_file()] or sorted(folder.glob("*.hdf5"))
    if not (folder / "options.json").is_file() or len(weights) == 0:
        raise SystemExit(f"{folder}: no options.json and .hdf5 weights there")
    return folder / "options.json", weights[0]


def default_tagger_spec(train_tags: list[list[str]], bilm: Path | None) -> dict:
    """The default architecture (ner-train's model node with the default embeddings) as keyword
    arguments of `TaggerModel`, for the entity types of `train_tags` and the biLM in folder
    `bilm` (None: no biLM). Plain JSON, so an older tree can build it too."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from ner.tagger.dataset import entity_types, tag_list

    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose("train", overrides=["elmo=none"])
    model = OmegaConf.to_container(cfg.model, resolve=True)
    del model["_target_"]
    model["tags"] = tag_list(entity_types(train_tags), model["tag_scheme"])
    spec = {"model": model, "max_chars": cfg.embeddings.char.max_chars, "bilm": None}
    if bilm is not None:
        options_file, weights = bilm_files(bilm)
        options = json.loads(options_file.read_text())
        model.update(
            elmo_dim=2 * options["lstm"]["projection_dim"],
            elmo_layers=options["lstm"]["n_layers"] + 1,
        )
        spec["bilm"] = {"options": str(options_file), "weights": str(weights)}
    return spec


def save_default_tagger(spec: dict, vocabulary: list[list[str]], folder: Path) -> Path:
    """A tagger of `spec` (`default_tagger_spec`) over `vocabulary`, random weights from seed 0,
    saved as a model folder with the code that imports as `ner` (so each tree saves its own
    format)."""
    import torch

    from ner import Tagger
    from ner.tagger.dataset import Vocabularies
    from ner.tagger.model import TaggerModel

    try:
        from ner.model.archive import BiLMFiles
    except ImportError:  # code from before the model side left ner.serving
        from ner.serving.archive import BiLMFiles

    model_args = dict(spec["model"])
    vocabularies = Vocabularies.build(vocabulary, model_args["tags"], max_chars=spec["max_chars"])
    torch.manual_seed(0)
    model = TaggerModel(
        **model_args, num_words=len(vocabularies.words), num_chars=len(vocabularies.chars)
    )
    bilm = spec["bilm"]
    files = BiLMFiles(bilm["options"], bilm["weights"], "warm") if bilm else None
    return Path(
        Tagger(model, vocabularies, files).save(folder, config={"benchmark": "random weights"})
    )


def corpus_sentences(corpus: str) -> dict[str, dict[str, list[list[str]]]]:
    """Split → {"tokens": sentences, "tags": tag names} of a named corpus or a folder of column
    files (ner.data.load_corpus)."""
    from ner.data import load_corpus

    data = load_corpus(corpus)
    found = {}
    for split, table in data.items():
        names = table.features["tags"].feature.names
        found[split] = {
            "tokens": [list(tokens) for tokens in table["tokens"]],
            "tags": [[names[i] for i in row] for row in table["tags"]],
        }
    return found
