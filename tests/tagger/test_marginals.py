"""CRF forward-backward (ner/tagger/marginals.py) against brute-force path enumeration."""

import itertools

import numpy as np
import pytest
import torch
from torchcrf import CRF

from ner.tagger.marginals import CrfPosterior

K = 3


def path_probabilities(emissions, start, transitions, end, length):
    """{path: probability} over all K**length paths of one sentence, by enumeration."""
    scores = {}
    for path in itertools.product(range(K), repeat=length):
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
    expected = crf._compute_normalizer(emissions.transpose(0, 1), mask.transpose(0, 1))
    torch.testing.assert_close(posterior.log_partition, expected)


@pytest.mark.parametrize(("start_at", "tags"), [(0, [1]), (1, [1, 1]), (0, [0, 1, 2, 2]), (3, [2])])
def test_span_probability_matches_enumeration(scores, start_at, tags) -> None:
    emissions, mask, start, transitions, end = scores
    posterior = CrfPosterior(emissions, mask, start, transitions, end)
    previous_allowed = np.array([True, False, True])
    next_allowed = np.array([False, True, True])
    paths_of_all = {0: path_probabilities(emissions[0], start, transitions, end, 4)[0]}
    stop = start_at + len(tags)

    def matches(path, check_neighbours):
        if list(path[start_at:stop]) != tags:
            return False
        if check_neighbours and start_at > 0 and not previous_allowed[path[start_at - 1]]:
            return False
        return not (check_neighbours and stop < 4 and not next_allowed[path[stop]])

    plain = sum(p for path, p in paths_of_all[0].items() if matches(path, False))
    bounded = sum(p for path, p in paths_of_all[0].items() if matches(path, True))
    # the span sits in row 0; row 1 gets a one-token span of its own in the same call
    paths = np.zeros((2, 4), dtype=np.int64)
    paths[0, start_at:stop] = tags
    spans = np.array([[0, start_at, stop], [0, start_at, stop], [1, 1, 2]])
    anything = np.ones((3, K), dtype=bool)
    given = np.stack([anything[0], previous_allowed, anything[0]])
    after = np.stack([anything[0], next_allowed, anything[0]])
    probabilities = posterior.span_probabilities(paths, spans, given, after)
    assert probabilities[0] == pytest.approx(plain, abs=1e-9)
    assert probabilities[1] == pytest.approx(bounded, abs=1e-9)
    row1, _ = path_probabilities(emissions[1], start, transitions, end, 2)
    assert probabilities[2] == pytest.approx(sum(p for q, p in row1.items() if q[1] == 0), abs=1e-9)


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
            posterior.span_probabilities(
                np.zeros((2, 4), dtype=np.int64), np.array([span]), everything, everything
            )
