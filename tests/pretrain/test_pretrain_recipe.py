"""`ner-pretrain`'s defaults are the recipe of the shipped biLM: conf/pretrain.yaml, composed
without overrides, trains what ner/pretrained/elmo-small-news/MODEL_CARD.md says that biLM was
trained with (schedule, optimizer, state resets, vocabulary, corpus) and has its options.json."""

import json
import re

from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from ner.pretrain import pretrained_files
from ner.pretrain.config import NAMED_OPTIMIZERS


def card_recipe(card: str) -> dict:
    """The training settings a model card (experiments/pretrain/model_card.py) states, in the
    config's layout."""

    def find(pattern: str) -> re.Match:
        match = re.search(pattern, card)
        assert match, f"MODEL_CARD.md states no {pattern!r}"
        return match

    number = r"([\d,.]+)"
    steps = find(rf"\| steps \| {number} × batch (\d+) streams × (\d+) steps \|")
    negatives = find(r"sampled softmax, (\d+) log-uniform negatives per batch")
    optimizer = find(
        rf"\| optimizer \| (\w+) lr {number}, (\d+) warm-up steps, (\w+) schedule, "
        rf"grad-norm clip {number}, dropout {number}, seed (\d+) \|"
    )
    reset = find(rf"restarts from a zero state with probability {number} per batch")
    curve = find(r"held-out perplexity every (\d+) steps")
    vocab = find(rf"the {number} most frequent \(count ≥ (\d+),")
    heldout = find(r"CRC-32 % 1000 < (\d+)\)")
    data = card.split("## Data", 1)[1].split("## Training", 1)[0]
    sources = re.findall(r"^\| `(\w+)` \| [\d,]+ \| [\d,]+ \|$", data, flags=re.MULTILINE)

    def integer(text: str) -> int:
        return int(text.replace(",", ""))

    return {
        "corpus": {"sources": sources, "heldout_per_mille": integer(heldout[1])},
        "vocab": {"max_size": integer(vocab[1]), "min_count": integer(vocab[2])},
        "pretrain": {
            "max_steps": integer(steps[1]),
            "batch_size": integer(steps[2]),
            "unroll_steps": integer(steps[3]),
            "n_negative_samples": integer(negatives[1]),
            "optimizer": {**NAMED_OPTIMIZERS[optimizer[1]], "lr": float(optimizer[2])},
            "warmup_steps": integer(optimizer[3]),
            "lr_schedule": optimizer[4],
            "clip_norm": float(optimizer[5]),
            "dropout": float(optimizer[6]),
            "seed": integer(optimizer[7]),
            "state_reset_probability": float(reset[1]),
            "eval_every": integer(curve[1]),
        },
    }


def composed_defaults() -> dict:
    with initialize_config_module("ner.conf", version_base="1.3"):
        return OmegaConf.to_container(compose("pretrain"), resolve=True)


def test_the_card_parser_reads_every_setting_of_the_recipe() -> None:
    recipe = card_recipe(pretrained_files()[0].with_name("MODEL_CARD.md").read_text("utf-8"))
    assert len(recipe["pretrain"]) == 12 and len(recipe["corpus"]["sources"]) == 10


def test_the_default_config_is_the_shipped_biLMs_recipe() -> None:
    options_file, _ = pretrained_files()
    recipe = card_recipe(options_file.with_name("MODEL_CARD.md").read_text(encoding="utf-8"))
    defaults = composed_defaults()
    for section, settings in recipe.items():
        chosen = {key: defaults[section][key] for key in settings}
        if section == "pretrain":  # the optimizer's settings that the card states
            chosen["optimizer"] = {key: chosen["optimizer"][key] for key in settings["optimizer"]}
        assert chosen == settings, f"conf/pretrain.yaml {section}: {chosen} != the card's"


def test_the_default_architecture_is_the_shipped_biLMs() -> None:
    options_file, _ = pretrained_files()
    shipped = json.loads(options_file.read_text(encoding="utf-8"))
    assert composed_defaults()["model"] == shipped
