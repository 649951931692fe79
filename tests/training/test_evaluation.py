"""Scoring a split: predictions of an unconstrained model are decoded leniently, never rejected;
the per-epoch scores that select the best epoch agree with the final ones of the `Tagger`."""

import torch

from ner.model.evaluation import write_predictions
from ner.model.tagger import Tagger
from ner.tagger.dataset import Split, Vocabularies, collate, tag_list
from ner.tagger.model import TaggerModel
from ner.training.evaluation import evaluate_split

TOKENS = [["John", "lives", "in", "Paris"], ["Mary", "left"]]
GOLD = [["I-PER", "O", "O", "I-LOC"], ["I-PER", "O"]]  # IOB1, as the CoNLL-2003 files
MODEL_TAGS = tag_list({"PER", "LOC"}, "bioes")
VOCABULARIES = Vocabularies.build(TOKENS, MODEL_TAGS)


def always_inside_per(constrain: bool) -> TaggerModel:
    """A BIOES model whose emissions favour ``I-PER`` on every token (zero transitions), so that
    unconstrained Viterbi yields the invalid ``I-PER I-PER …``."""
    model = TaggerModel(
        tags=MODEL_TAGS,
        tag_scheme="bioes",
        constrain_decoding=constrain,
        num_words=len(VOCABULARIES.words),
        word_dim=4,
    )
    with torch.no_grad():
        model.projection.weight.zero_()
        model.projection.bias.zero_()
        model.projection.bias[MODEL_TAGS.index("I-PER")] = 5.0
        crf = model.crf
        for scores in (crf.start_transitions, crf.transitions, crf.end_transitions):
            scores.zero_()
    return model


def test_unconstrained_invalid_predictions_are_scored_leniently(tmp_path):
    examples = [VOCABULARIES.encode(i, tokens, None) for i, tokens in enumerate(TOKENS)]
    model = always_inside_per(constrain=False)
    assert model.decode(collate(examples))[1] == [MODEL_TAGS.index("I-PER")] * 2
    result = Tagger(model, VOCABULARIES).evaluate(TOKENS, GOLD, scheme="iob1")
    predictions = tmp_path / "predictions.txt"
    write_predictions(predictions, TOKENS, GOLD, result.predicted)
    # Lenient decoding: each sentence is one PER chunk over all its tokens (IOB1: I-PER …).
    lines = predictions.read_text().split("\n\n")[1].split("\n")
    assert lines == ["Mary I-PER I-PER", "left O I-PER"]
    assert 0.0 <= result.scores["f1"] <= 100.0 and result.scores["precision"] == 0.0
    assert result.scores["strict"]["precision"] == 0.0 and result.scores["predicted_entities"] == 2
    surface = result.scores["surface"]  # distinct texts: gold John, Mary (PER), Paris (LOC)
    assert (surface["support"], surface["precision"]) == (3, 0.0)
    assert surface["per_type"]["PER"]["support"] == 2


def test_the_per_epoch_scores_are_the_final_ones_without_the_strict_mode():
    examples = [VOCABULARIES.encode(i, tokens, None) for i, tokens in enumerate(TOKENS)]
    torch.manual_seed(0)
    model = TaggerModel(
        tags=MODEL_TAGS, tag_scheme="bioes", num_words=len(VOCABULARIES.words), word_dim=4
    ).eval()
    split = Split("validation", TOKENS, GOLD)
    quick = evaluate_split(
        model,
        split,
        examples,
        collate,
        corpus_scheme="iob1",
        model_scheme="bioes",
        batch_size=8,
        device=torch.device("cpu"),
    )
    final = Tagger(model, VOCABULARIES).evaluate(TOKENS, GOLD, scheme="iob1").scores
    assert "strict" in final and "strict" not in quick
    for key in ("precision", "recall", "f1", "support", "per_type", "predicted_entities"):
        assert quick[key] == final[key]
