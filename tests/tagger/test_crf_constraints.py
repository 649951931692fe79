"""Tag-scheme transition masks and constrained Viterbi on random-weight CRFs."""

import itertools

import pytest
import torch
from torchcrf import CRF

from ner.tagger.constraints import allowed_transitions, is_valid_sequence
from ner.tagger.crf import ConstrainedCRF

BIO = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
BIOES = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC"]
TAGS = {"iob1": BIO, "iob2": BIO, "bioes": BIOES}


def allowed(scheme: str, previous: str, current: str) -> bool:
    tags = TAGS[scheme]
    masks = allowed_transitions(scheme, tags)
    return bool(masks.transitions[tags.index(previous), tags.index(current)])


@pytest.mark.parametrize(
    ("scheme", "previous", "current", "expected"),
    [
        ("iob2", "O", "I-PER", False),
        ("iob2", "B-PER", "I-LOC", False),
        ("iob2", "B-PER", "I-PER", True),
        ("iob2", "I-PER", "B-PER", True),
        ("iob1", "O", "I-PER", True),
        ("iob1", "O", "B-PER", False),
        ("iob1", "I-PER", "B-PER", True),
        ("iob1", "I-LOC", "B-PER", False),
        ("bioes", "B-PER", "E-PER", True),
        ("bioes", "B-PER", "O", False),
        ("bioes", "I-PER", "E-LOC", False),
        ("bioes", "E-PER", "S-LOC", True),
        ("bioes", "O", "I-PER", False),
        ("bioes", "S-PER", "E-PER", False),
    ],
)
def test_transitions(scheme, previous, current, expected):
    assert allowed(scheme, previous, current) is expected


def test_start_and_end_masks():
    masks = allowed_transitions("bioes", BIOES)
    assert [t for t, ok in zip(BIOES, masks.start.tolist(), strict=True) if ok] == [
        "O",
        "B-PER",
        "S-PER",
        "B-LOC",
        "S-LOC",
    ]
    assert [t for t, ok in zip(BIOES, masks.end.tolist(), strict=True) if ok] == [
        "O",
        "E-PER",
        "S-PER",
        "E-LOC",
        "S-LOC",
    ]
    iob2 = allowed_transitions("iob2", BIO)
    assert not iob2.start[BIO.index("I-PER")] and iob2.end.all()


def test_tags_outside_the_scheme_are_rejected():
    with pytest.raises(ValueError):
        allowed_transitions("iob2", ["O", "S-PER"])
    with pytest.raises(ValueError, match="unknown tag scheme"):
        allowed_transitions("bilou2", ["O"])


def random_crf(scheme: str | None, tags: list[str], seed: int) -> ConstrainedCRF:
    torch.manual_seed(seed)
    crf = ConstrainedCRF(len(tags), allowed_transitions(scheme, tags) if scheme else None)
    for parameter in crf.parameters():
        torch.nn.init.normal_(parameter, std=3.0)
    return crf


@pytest.mark.parametrize("scheme", ["iob1", "iob2", "bioes"])
def test_constrained_viterbi_never_outputs_invalid_sequences(scheme):
    tags = TAGS[scheme]
    crf = random_crf(scheme, tags, seed=0)
    emissions = torch.randn(300, 15, len(tags)) * 4
    mask = torch.ones(300, 15, dtype=torch.bool)
    mask[::3, 7:] = False
    paths = crf.decode(emissions, mask)
    assert all(is_valid_sequence(scheme, [tags[i] for i in p]) for p in paths)
    assert [len(p) for p in paths[:3]] == [7, 15, 15]
    # The same weights without constraints do produce invalid sequences: the masks matter.
    free = ConstrainedCRF(len(tags))
    free.load_state_dict(crf.state_dict())
    assert not all(
        is_valid_sequence(scheme, [tags[i] for i in p]) for p in free.decode(emissions, mask)
    )


@pytest.mark.parametrize("scheme", ["iob2", "bioes"])
def test_constrained_viterbi_is_the_best_valid_path(scheme):
    """Brute force over every tag sequence of a short sentence."""
    tags = TAGS[scheme][:5]
    crf = random_crf(scheme, tags, seed=1)
    emissions = torch.randn(6, 4, len(tags)) * 2
    start, transitions, end = (t.detach() for t in crf.constrained_scores())
    for row in range(6):
        best, best_path = float("-inf"), None
        for path in itertools.product(range(len(tags)), repeat=4):
            score = (
                start[path[0]]
                + end[path[-1]]
                + sum(emissions[row, i, t] for i, t in enumerate(path))
            )
            score = score + sum(transitions[a, b] for a, b in itertools.pairwise(path))
            if score > best:
                best, best_path = float(score), list(path)
        decoded, scores = crf.viterbi(emissions[row : row + 1], torch.ones(1, 4, dtype=torch.bool))
        assert decoded[0].tolist() == best_path
        assert float(scores[0]) == pytest.approx(best, rel=1e-5)


def test_unconstrained_decoding_matches_pytorch_crf():
    crf = random_crf(None, BIOES, seed=2)
    emissions = torch.randn(8, 11, len(BIOES))
    mask = torch.ones(8, 11, dtype=torch.bool)
    for row, length in enumerate([11, 1, 5, 9, 2, 11, 3, 7]):
        mask[row, length:] = False
    assert crf.decode(emissions, mask) == CRF.decode(crf, emissions, mask)


@pytest.mark.parametrize(
    ("shape", "mask"),
    [
        ((2, 3), torch.ones(2, 3, dtype=torch.bool)),  # emissions of two dimensions
        ((2, 3, 4), torch.ones(2, 3, dtype=torch.bool)),  # four tags for a CRF of five
        ((2, 3, 5), torch.ones(2, 4, dtype=torch.bool)),  # mask of another length
        ((2, 3, 5), torch.tensor([[1, 1, 0], [0, 1, 1]], dtype=torch.bool)),  # an empty first step
    ],
)
def test_bad_shapes_are_refused_as_pytorch_crf_refuses_them(shape, mask):
    crf = ConstrainedCRF(5)
    emissions = torch.zeros(shape)
    with pytest.raises(ValueError) as stock:
        CRF(5, batch_first=True).decode(emissions, mask)
    with pytest.raises(ValueError) as ours:
        crf.viterbi(emissions, mask)
    assert str(ours.value) == str(stock.value)
