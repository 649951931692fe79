"""Each default of the objects the training config builds is written once, in their signatures:
the composed ``model`` and ``trainer`` nodes hold `TaggerModel`'s and `Trainer`'s defaults (with
or without the inputs their keys follow), and no file of the groups that build them repeats one."""

import inspect
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from ner.tagger.model import TaggerModel
from ner.training.config import TrainConfig
from ner.training.loop import Trainer

CONF = Path(__file__).parents[2] / "conf"
BUILT = {"model": TaggerModel, "trainer": Trainer}


def signature_defaults(target: type) -> dict[str, Any]:
    parameters = inspect.signature(target).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def composed(*overrides: str) -> dict[str, Any]:
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose("train", overrides=list(overrides))
    return OmegaConf.to_container(cfg, resolve=True)


@pytest.mark.parametrize(
    "overrides",
    [[], ["embeddings=char", "embeddings.char=null", "elmo=none"]],
    ids=["every input", "no input"],
)
@pytest.mark.parametrize("node", sorted(BUILT))
def test_a_node_holds_the_defaults_of_the_signature_of_what_it_builds(node, overrides):
    defaults = signature_defaults(BUILT[node])
    values = composed(*overrides)[node]
    shared = sorted(set(defaults) & set(values))
    assert len(shared) >= 8, shared
    assert {key: values[key] for key in shared} == {key: defaults[key] for key in shared}


def leaves(node: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """The dotted keys and values of a group file, without Hydra's own keys."""
    found = []
    for key, value in node.items():
        if key == "defaults" or key.startswith("_"):
            continue
        if isinstance(value, dict):
            found += leaves(value, f"{prefix}{key}.")
        else:
            found.append((f"{prefix}{key}", value))
    return found


@pytest.mark.parametrize("group", ["model", "trainer", "embeddings"])
def test_the_group_files_do_not_repeat_a_default(group):
    schema = OmegaConf.structured(TrainConfig)
    files = sorted((CONF / group).rglob("*.yaml"))
    assert files
    for path in files:
        package = ".".join(path.relative_to(CONF).parent.parts)
        for key, value in leaves(OmegaConf.to_container(OmegaConf.load(path)) or {}, f"{package}."):
            default = OmegaConf.select(schema, key, default=KeyError)
            assert value != default, f"{path.relative_to(CONF)}: {key}={value} is the default"
