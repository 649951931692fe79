"""What to label next (ner/model/ranking.py): the doubt of a tagged line, checked against brute
force over every tag path, and the order, ties, budget and near-copies of a ranking."""

import itertools

import pytest
import torch
from tiny_tagger import one_thread, train_tagger

from ner.data.tag_input import Line
from ner.data.tokenize import Token
from ner.model.ranking import Ranked, near_copy_key, ranked, score_lines, uncertainty
from ner.model.results import Entity, TaggedText
from ner.tagger.dataset import collate


@pytest.fixture(scope="module")
def tagger():
    with one_thread():
        yield train_tagger()


def outside_by_enumeration(tagger, tokens: list[str]) -> list[float]:
    """P(y_t = O) of each token, summed over every one of the K**T tag paths."""
    with one_thread(), torch.no_grad():
        batch = collate([tagger.vocabularies.encode(0, tokens, None)])
        batch.elmo, _ = tagger.bilm.embed_batch([tokens], {})
        emissions = tagger.model.emissions(batch)[0].double()
        start, transitions, end = (s.double() for s in tagger.model.crf.constrained_scores())
    outside = tagger.model.tags.index("O")
    paths = list(itertools.product(range(len(tagger.model.tags)), repeat=len(tokens)))
    scores = []
    for path in paths:
        score = start[path[0]] + emissions[0, path[0]] + end[path[-1]]
        for t in range(1, len(path)):
            score = score + transitions[path[t - 1], path[t]] + emissions[t, path[t]]
        scores.append(score)
    chances = torch.softmax(torch.stack(scores), 0)
    return [
        float(sum(c for path, c in zip(paths, chances, strict=True) if path[t] == outside))
        for t in range(len(tokens))
    ]


def test_outside_is_the_lowest_enumerated_chance_of_a_token_tagged_o(tagger) -> None:
    tokens = ["Anna", "rained", "."]
    with one_thread():
        (result,) = tagger.predict_tokens([tokens])
    chances = outside_by_enumeration(tagger, tokens)
    tagged_o = [chance for chance, tag in zip(chances, result.tags, strict=True) if tag == "O"]
    assert tagged_o  # the sentence has tokens tagged O, so `outside` is no default
    assert result.outside == pytest.approx(min(tagged_o), abs=1e-9)
    lowest = min([result.outside, *(entity.confidence for entity in result.entities)])
    assert result.lowest_confidence() == lowest
    assert uncertainty(result) == round(1 - lowest, 6)


def test_long_sentences_in_pieces_keep_the_lowest_outside_chance(tagger) -> None:
    tokens = ["It", "rained", "on", "Monday", ".", "Anna", "likes", "Rome", "."]
    with one_thread():
        (whole,) = tagger.predict_tokens([tokens])
        (first,), (second,) = (
            tagger.predict_tokens([tokens[:5]]),
            tagger.predict_tokens([tokens[5:]]),
        )
        tagger.max_length = 5
        try:
            (pieces,) = tagger.predict_tokens([tokens])
        finally:
            tagger.max_length = 256
    assert pieces.outside == pytest.approx(min(first.outside, second.outside), abs=1e-12)
    assert 0 < whole.outside <= 1


def text(words: str, confidences: list[float], outside: float = 1.0) -> TaggedText:
    """A tagged text of `words` whose entities (one per confidence, on the first word) and
    tokens tagged O have these chances."""
    tokens, offset = [], 0
    for word in words.split():
        tokens.append(Token(word, offset, offset + len(word)))
        offset += len(word) + 1
    entities = [Entity(tokens[0].text, "PER", 0, tokens[0].end, 0, 1, c) for c in confidences]
    tags = ["O"] * len(tokens)
    return TaggedText(words, tokens, tags, [(0, len(tokens))], entities, None, outside)


def item(number: int, words: str, confidences: list[float], outside: float = 1.0) -> Ranked:
    result = text(words, confidences, outside)
    return Ranked(Line(number, words), result, uncertainty(result))


def test_ranked_by_score_ties_in_line_order_within_the_budget() -> None:
    items = [
        item(1, "Anna sang", [0.9]),  # 0.1
        item(2, "Rome fell", [0.6], outside=0.7),  # 0.4
        item(3, "Bob ran", [0.99], outside=0.6),  # 0.4, a tie with line 2
        item(4, "no entity here", [], outside=0.95),  # 0.05
        item(5, "Paris", [0.2]),  # 0.8
    ]
    order = [r.line.number for r in ranked(items)]
    assert order == [5, 2, 3, 1, 4]
    assert [r.line.number for r in ranked(reversed(items))] == order  # input order cannot matter
    assert [r.line.number for r in ranked(items, budget=2)] == [5, 2]
    assert ranked(items, budget=10) == ranked(items)
    scores = [r.score for r in ranked(items)]
    assert scores == sorted(scores, reverse=True) and scores[1] == scores[2] == 0.4


def test_distinct_passes_over_near_copies() -> None:
    items = [
        item(1, "Leeds 2 Chelsea 0", [0.3]),
        item(2, "LEEDS 3 Chelsea 1", [0.4]),  # a near-copy of line 1, less doubtful
        item(3, "Leeds beat Chelsea", [0.5]),
    ]
    assert near_copy_key(items[0].result) == near_copy_key(items[1].result)
    assert [r.line.number for r in ranked(items, distinct=True)] == [1, 3]
    assert [r.line.number for r in ranked(items, budget=2, distinct=True)] == [1, 3]
    assert [r.line.number for r in ranked(items, budget=2)] == [1, 2]


def test_score_lines_keeps_input_order_and_skips_unreadable_lines(tagger) -> None:
    lines = [Line(1, "Anna likes Rome ."), Line(2, None, "line 2 is bad"), Line(3, "")]
    warnings: list[str] = []
    with one_thread():
        scored, skipped = score_lines(tagger, lines, input_format="tokens", warn=warnings.append)
    assert skipped == 1 and warnings == ["line 2 is bad"]
    assert [s.line.number for s in scored] == [1, 3]
    assert scored[1].score == 0.0  # an empty line: no decision, no doubt
    with pytest.raises(ValueError, match="not conll"):
        score_lines(tagger, lines, input_format="conll")
