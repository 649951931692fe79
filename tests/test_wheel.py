"""The package as users install it: build the wheel, install it into a fresh virtualenv, and run
every console script from an empty folder (no checkout, no repo paths, configs from the wheel).

The virtualenv reuses the dependencies installed for the tests (a ``.pth`` line pointing at their
site-packages) so that nothing is downloaded; the package itself comes only from the wheel.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from ner.common.paths import checkout_root

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(os.environ["NER_ELMO_FIXTURE"])  # set by conftest.py

pytestmark = pytest.mark.skipif(checkout_root() is None, reason="needs the source checkout")

TRAIN = [
    ("John Smith visited Paris .", "B-PER I-PER O B-LOC O"),
    ("Mary works for Acme Corp .", "B-PER O O B-ORG I-ORG O"),
    ("Peter Jones left Berlin again .", "B-PER I-PER O B-LOC O O"),
    ("Anna visited Reuters on Monday .", "B-PER O B-ORG O O O"),
]


def write_corpus(folder: Path) -> Path:
    """A folder corpus (train/dev/test files, token and tag columns)."""
    folder.mkdir()
    blocks = [
        "\n".join(f"{w} {t}" for w, t in zip(words.split(), tags.split(), strict=True))
        for words, tags in TRAIN
    ]
    text = "\n\n".join(blocks) + "\n\n"
    for name, repeat in (("train", 6), ("dev", 1), ("test", 1)):
        (folder / f"{name}.txt").write_text(text * repeat)
    return folder


def copy_sources(root: Path) -> Path:
    """The files a fresh clone has that the package is built from, copied under `root`."""
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("ner", "conf", "hydra_plugins"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    return source


def new_venv(venv: Path) -> Path:
    """A fresh virtualenv that sees the dependencies installed for the tests (a ``.pth`` line:
    nothing is downloaded) but not this package; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_install(python: Path, *args: str) -> None:
    """``pip install --no-deps`` into the virtualenv of `python`, offline."""
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "-q", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]


def user_env(root: Path, venv: Path) -> dict[str, str]:
    """A user's environment: the virtualenv's scripts first on PATH, no settings of the tests'
    own, the per-user cache folder inside `root`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("NER_DATA_DIR", "PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        XDG_CACHE_HOME=str(root / "cache"),
        OMP_NUM_THREADS="1",
        PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
    )
    return env


def tiny_run(corpus: Path) -> list[str]:
    """ner-train overrides for a run of a few seconds on `corpus` (write_corpus)."""
    return [
        f"data.name={corpus}", "embeddings=words", "embeddings.glove.dim=8",
        "embeddings.char.filters=8", "model.hidden_size=8", "model.num_layers=1", "elmo=fixture",
        "trainer.max_epochs=2", "trainer.num_threads=1", "data.batch_size=8", "logger=none",
        "progress=false",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """The wheel built from a copy of the sources, installed into a fresh venv."""
    root = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(root / "dist"), str(copy_sources(root))],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    [wheel] = (root / "dist").glob("ner_elmo-*.whl")
    venv = root / "venv"
    pip_install(new_venv(venv), str(wheel))
    work = root / "empty"
    work.mkdir()
    return {"root": root, "bin": venv / "bin", "work": work, "env": user_env(root, venv)}


def run(installed: dict, *command: str, timeout: int = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(installed["bin"] / command[0]), *command[1:]],
        cwd=installed["work"],
        env=installed["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"{command}: {result.stderr[-3000:]}"
    return result


@pytest.mark.slow
def test_the_installed_console_scripts_work_from_an_empty_folder(installed):
    work = installed["work"]
    where = run(
        installed,
        "python",
        "-c",
        "import ner, ner.common.paths as p; print(ner.__file__, p.checkout_root(), p.data_dir())",
    ).stdout
    package, checkout, data = where.split()
    assert "site-packages" in package and not package.startswith(str(REPO))
    assert checkout == "None"  # installed: no checkout, so data goes to the user's cache folder
    assert Path(data) == installed["root"] / "cache" / "ner-elmo"

    help_text = run(installed, "ner-train", "--help").stdout
    assert (
        "elmo: efml_de, efml_es, efml_fr, efml_nl, fixture, folder, medium, none" in help_text
        and "data.options.holdout=0.1" in help_text
    )
    assert "pretrain" not in help_text.split("Most used")[0]
    composed = run(installed, "ner-train", "--cfg", "job", "--resolve").stdout
    shipped = [line.split(": ", 1)[1] for line in composed.splitlines() if "weight_file:" in line]
    assert shipped and Path(shipped[0]).is_file() and "site-packages" in shipped[0]
    assert "ner-pretrain" in run(installed, "ner-pretrain", "--help").stdout
    assert "conll2003" in run(installed, "ner-data", "list").stdout
    assert "conll2003" in run(installed, "python", "-m", "ner.cli.data", "list").stdout
    shipped_taggers = run(installed, "ner-models", "list").stdout  # package data of the wheel
    assert "conll2003" in shipped_taggers and "conll2000" in shipped_taggers
    # The configs come from the wheel (ner/conf); a user's own config folder joins them.
    (work / "my_conf" / "data").mkdir(parents=True)
    (work / "my_conf" / "data" / "shop.yaml").write_text("name: shop_orders\n")
    searched = run(
        installed, "ner-train", "hydra.searchpath=[file://my_conf]", "data=shop", "--cfg", "job"
    ).stdout
    assert "name: shop_orders" in searched and "max_epochs" in searched

    corpus = write_corpus(work / "tiny")
    run_dir = work / "runs" / "tiny"
    tiny = tiny_run(corpus)
    run(installed, "ner-train", *tiny, f"hydra.run.dir={run_dir}")
    results = json.loads((run_dir / "results.json").read_text())
    assert results["epochs_run"] == 2 and results["git_commit"] is None
    assert (installed["root"] / "cache" / "ner-elmo" / "elmo_cache").is_dir()

    scores = json.loads(run(installed, "ner-evaluate", str(run_dir), "--split", "test").stdout)
    assert scores["f1"] == pytest.approx(results["test"]["f1"])
    (work / "input.txt").write_text("John Smith visited Paris on Monday.\n")
    predicted = run(installed, "ner-predict", str(run_dir / "model"), "input.txt").stdout
    assert json.loads(predicted.splitlines()[0])["text"] == "John Smith visited Paris on Monday."
    run(
        installed, "ner-embed", "input.txt", "layers.hdf5",
        "--options-file", str(FIXTURE / "options.json"),
        "--weight-file", str(FIXTURE / "lm_weights.hdf5"), "--threads", "1", "--no-progress",
    )  # fmt: skip
    assert (work / "layers.hdf5").stat().st_size > 0
    run(installed, "ner-report", str(work / "runs"), "--no-plots")
    assert "tiny" in (work / "runs" / "report.md").read_text()

    # The SLURM launcher plugin ships in the wheel (hydra_plugins/ner_launcher); Hydra finds it.
    assert "NerSlurmLauncher" in run(installed, "ner-train", "--info", "plugins").stdout
    # The search's sweeper plugin ships in the wheel (hydra_plugins/ner_sweeper).
    run(installed, "ner-train", "-m", "hparams_search=optuna", "hydra.sweeper.n_trials=1", *tiny)
    search = work / "multirun" / "optuna" / "tagger"
    assert (search / "0" / "results.json").is_file() and (search / "optuna.db").is_file()
    assert "| 1 (best) | 0 |" in run(installed, "ner-report", str(search), "--no-plots").stdout
