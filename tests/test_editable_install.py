"""The README's install as a user types it: ``pip install -e .`` of a fresh copy of the sources
into a new virtualenv, then the hyperparameter search from an empty folder. Hydra finds the
search's sweeper only by listing the ``hydra_plugins`` folders on its path, which an editable
install must expose as a folder, not only through its import hook."""

import subprocess

import pytest
from test_wheel import copy_sources, new_venv, pip_install, tiny_run, user_env, write_corpus

from ner.common.paths import checkout_root

pytestmark = pytest.mark.skipif(checkout_root() is None, reason="needs the source checkout")


@pytest.mark.slow
def test_the_search_starts_after_an_editable_install_from_an_empty_folder(tmp_path):
    venv = tmp_path / "venv"
    pip_install(new_venv(venv), "--no-build-isolation", "--editable", str(copy_sources(tmp_path)))
    work = tmp_path / "empty"
    work.mkdir()
    corpus = write_corpus(work / "tiny")
    search = ["-m", "hparams_search=optuna", "hydra.sweeper.n_trials=1"]
    done = subprocess.run(
        [venv / "bin" / "ner-train", *search, *tiny_run(corpus)],
        cwd=work, env=user_env(tmp_path, venv), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    trial = work / "multirun" / "optuna" / "tagger" / "0"
    assert (trial / "results.json").is_file() and (trial.parent / "optuna.db").is_file()
