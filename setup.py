"""Build shim for the one thing pyproject.toml cannot say: the Hydra configs live in the top-level
``conf/`` folder of the repository and ship inside the package as ``ner.conf`` (so ``ner-train``
from an installed wheel finds them, and ``pkg://ner.conf`` works in both)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["ner", "ner.*"]), "ner.conf"],
    package_dir={"ner.conf": "conf"},
)
