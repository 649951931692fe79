"""The taggers shipped in the package: small, with a card each, loadable by name, and scoring
exactly what their cards state (slow: tags the corpora's validation and test splits, which the
first run downloads, and the first load fetches GloVe 6B.50d)."""

import pytest
import torch

from ner.cli.models import main as models_main
from ner.cli.predict import main as predict_main
from ner.data.corpora import NAMED_CORPORA
from ner.model.cards import folder_bytes, score_split
from ner.model.shipped import read_card, shipped_taggers
from ner.model.tagger import Tagger

SHIPPED = shipped_taggers()
MAX_BYTES = 10 * 10**6  # each shipped tagger adds at most 10 MB to the repository and the wheel


def test_the_promised_taggers_ship_with_cards() -> None:
    assert {"conll2003", "conll2000"} <= set(SHIPPED)
    for name, folder in SHIPPED.items():
        card = read_card(folder)
        assert (folder / "MODEL_CARD.md").is_file(), name
        assert card["licence"] and card["command"].startswith("ner-train "), name
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        assert size <= MAX_BYTES and card["bytes"] == folder_bytes(folder), name
        assert not (folder / "bilm").exists(), f"{name} copies the biLM instead of referring to it"


def test_ner_models_list_describes_each(capsys) -> None:
    models_main(["list"])
    printed = capsys.readouterr().out
    for name, folder in SHIPPED.items():
        row = next(line for line in printed.splitlines() if line.startswith(name))
        assert f"{read_card(folder)['scores']['test']['f1']:.2f}" in row


def test_an_unknown_name_is_one_line_listing_the_names(capsys) -> None:
    assert predict_main(["conll2033", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "conll2003" in err and "ner-models list" in err


def corpus_source(name: str) -> list[pytest.MarkDecorator]:
    """A tagger whose corpus comes from nltk_data (not PyPI) is scored only with the mirror."""
    return [pytest.mark.mirror] if NAMED_CORPORA[read_card(SHIPPED[name])["corpus"]].nltk else []


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=corpus_source(name)) for name in sorted(SHIPPED)]
)
def test_a_shipped_tagger_scores_what_its_card_states(name: str) -> None:
    card = read_card(SHIPPED[name])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tagger = Tagger.load(name)
        for split in ("validation", "test"):
            scores = score_split(tagger, card["corpus"], split, card.get("corpus_options"))
            stated = card["scores"][split]
            assert round(scores["f1"], 2) == round(stated["f1"], 2), (name, split)
            assert scores["per_type"].keys() == stated["per_type"].keys()
    finally:
        torch.set_num_threads(threads)
