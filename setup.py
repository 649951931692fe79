"""Build shim for the one thing pyproject.toml cannot say: the Hydra configs live in the top-level
``conf/`` folder of the repository and ship inside the package as ``ner.conf`` (so ``ner-train``
from an installed wheel finds them, and ``pkg://ner.conf`` works in both). The package list given
here also names ``hydra_plugins.ner_sweeper``, the sweeper of ``hparams_search=optuna``, and
``hydra_plugins.ner_launcher``, the launcher of ``hydra/launcher=slurm``."""

from setuptools import find_packages, setup

setup(
    # Hydra finds plugins by listing the folders of the hydra_plugins namespace package. Naming
    # the namespace itself makes an editable install (pip install -e .) put this checkout's
    # hydra_plugins/ folder on its path; with the subpackage alone, the folder is reachable only
    # through setuptools' import hook, which imports it but cannot list it.
    packages=[
        *find_packages(include=["ner", "ner.*"]),
        "ner.conf",
        "hydra_plugins",
        "hydra_plugins.ner_sweeper",
        "hydra_plugins.ner_launcher",
    ],
    package_dir={"ner.conf": "conf"},
)
