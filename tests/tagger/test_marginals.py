"""CRF forward-backward (ner/tagger/marginals.py) against brute-force path enumeration: token
marginals, the partition function, and chunk probabilities summed over every tag encoding."""

import itertools

import numpy as np
import pytest
import torch
from torchcrf import CRF

from ner.data.tag_schemes import split_tag, tags_to_spans
from ner.tagger.constraints import allowed_transitions, continuation_mask
from ner.tagger.marginals import CrfPosterior

K = 3


def path_probabilities(emissions, start, transitions, end, length, num_tags=K):
    """{path: probability} over all num_tags**length paths of one sentence, by enumeration."""
    scores = {}
    for path in itertools.product(range(num_tags), repeat=length):
        score = start[path[0]] + emissions[0, path[0]] + end[path[-1]]
        for t in range(1, length):
            score = score + transitions[path[t - 1], path[t]] + emissions[t, path[t]]
        scores[path] = score
    log_z = torch.logsumexp(torch.stack(list(scores.values())), 0)
    return {path: float((s - log_z).exp()) for path, s in scores.items()}, log_z


@pytest.fixture
def scores():
    generator = torch.Generator().manual_seed(0)
    emissions = torch.randn(2, 4, K, generator=generator, dtype=torch.float64)
    start = torch.randn(K, generator=generator, dtype=torch.float64)
    transitions = torch.randn(K, K, generator=generator, dtype=torch.float64)
    end = torch.randn(K, generator=generator, dtype=torch.float64)
    transitions[0, 2] = float("-inf")  # a constraint: tag 0 never precedes tag 2
    start[2] = float("-inf")
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)
    return emissions, mask, start, transitions, end


def test_token_marginals_and_partition_match_enumeration(scores) -> None:
    emissions, mask, start, transitions, end = scores
    posterior = CrfPosterior(emissions, mask, start, transitions, end)
    marginals = posterior.token_marginals()
    for b, length in enumerate([4, 2]):
        paths, log_z = path_probabilities(emissions[b], start, transitions, end, length)
        assert float(posterior.log_partition[b]) == pytest.approx(float(log_z), abs=1e-9)
        for t in range(length):
            for k in range(K):
                expected = sum(p for path, p in paths.items() if path[t] == k)
                assert float(marginals[b, t, k]) == pytest.approx(expected, abs=1e-9)
    assert float(marginals[0, 0, 2]) == 0.0  # banned start


def test_partition_matches_pytorch_crf_without_constraints() -> None:
    torch.manual_seed(1)
    crf = CRF(K, batch_first=True)
    emissions = torch.randn(3, 5, K)
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4], dtype=torch.bool)
    posterior = CrfPosterior(
        emissions, mask, crf.start_transitions, crf.transitions, crf.end_transitions
    )
    # pytorch-crf's log-likelihood of a path is its score less log Z: here, the all-0 path's.
    lengths = mask.sum(1)
    score = (
        crf.start_transitions[0]
        + (emissions[..., 0] * mask).sum(1)
        + (lengths - 1) * crf.transitions[0, 0]
        + crf.end_transitions[0]
    )
    likelihood = crf(emissions, torch.zeros(3, 5, dtype=torch.long), mask, reduction="none")
    torch.testing.assert_close(posterior.log_partition, (score - likelihood).detach())


def chunk_enumeration(tags, scheme, emissions, start, transitions, end, length):
    """{(type, s, e): probability} of every chunk, summing the probabilities of all tag paths
    whose lenient decoding contains it (brute force over K**length paths)."""
    probabilities, _ = path_probabilities(emissions, start, transitions, end, length, len(tags))
    chunks: dict[tuple[str, int, int], float] = {}
    for path, p in probabilities.items():
        for span in tags_to_spans([tags[k] for k in path], scheme, lenient=True):
            chunks[tuple(span)] = chunks.get(tuple(span), 0.0) + p
    return chunks


@pytest.mark.parametrize(
    ("scheme", "tags", "constrained"),
    [
        ("iob1", ["O", "B-A", "I-A", "B-B", "I-B"], True),
        ("iob1", ["O", "B-A", "I-A", "I-B"], False),
        ("bioes", ["O", "B-A", "I-A", "E-A", "S-A"], False),
        ("bioes", ["O", "B-A", "I-A", "E-A", "S-A"], True),
        ("iob2", ["O", "B-A", "I-A", "B-B", "I-B"], True),
    ],
)
def test_chunk_probabilities_sum_over_every_encoding(scheme, tags, constrained) -> None:
    k = len(tags)
    generator = torch.Generator().manual_seed(3)
    emissions = torch.randn(2, 4, k, generator=generator, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.bool)
    start, transitions, end = (
        torch.randn(shape, generator=generator, dtype=torch.float64) for shape in (k, (k, k), k)
    )
    if constrained:
        masks = allowed_transitions(scheme, tags)
        start = start.masked_fill(~masks.start, float("-inf"))
        transitions = transitions.masked_fill(~masks.transitions, float("-inf"))
        end = end.masked_fill(~masks.end, float("-inf"))
    posterior = CrfPosterior(emissions, mask, start, transitions, end)
    kinds = np.array([split_tag(tag)[1] for tag in tags])
    continues = continuation_mask(tags)
    for row, length in enumerate([4, 3]):
        expected = chunk_enumeration(tags, scheme, emissions[row], start, transitions, end, length)
        candidates = [
            (kind, s, e)
            for kind in ("A", "B")
            for s in range(length)
            for e in range(s + 1, length + 1)
        ]
        chunks = np.array([(row, s, e) for _, s, e in candidates])
        members = np.stack([kinds == kind for kind, _, _ in candidates])
        found = posterior.chunk_probabilities(chunks, members, continues)
        for candidate, probability in zip(candidates, found, strict=True):
            assert probability == pytest.approx(expected.get(candidate, 0.0), abs=1e-9), candidate


def test_bad_shapes_and_spans_raise(scores) -> None:
    emissions, mask, start, transitions, end = scores
    with pytest.raises(ValueError, match="mask"):
        CrfPosterior(emissions, mask[:, :2], start, transitions, end)
    empty = mask.clone()
    empty[1] = False
    with pytest.raises(ValueError, match="at least one token"):
        CrfPosterior(emissions, empty, start, transitions, end)
    posterior = CrfPosterior(emissions, mask, start, transitions, end)
    everything = np.ones((1, K), dtype=bool)
    for span in ([1, 1, 3], [0, 2, 2], [0, -1, 1]):  # past row 1's 2 tokens, empty, negative
        with pytest.raises(ValueError, match="do not fit"):
            posterior.chunk_probabilities(np.array([span]), everything, np.ones((K, K), bool))
