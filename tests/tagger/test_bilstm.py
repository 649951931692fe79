"""The padded-batch BiLSTM gives what `nn.LSTM` gives on a packed sequence, values and gradients."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ner.bilm.lstm import reverse_padded
from ner.common.precision import fused_lstm_keeps_float32_cell
from ner.tagger import bilstm
from ner.tagger.bilstm import BiLSTM, length_groups


@pytest.mark.parametrize("num_layers", [1, 2])
def test_matches_nn_lstm_on_a_packed_sequence(num_layers):
    torch.manual_seed(0)
    lstm = BiLSTM(5, 7, num_layers).double().eval()
    lengths = torch.tensor([6, 2, 4, 1])
    mask = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    inputs = torch.randn(4, 6, 5, dtype=torch.double)
    # Padding holds garbage, which must not reach any real position.
    inputs = torch.where(mask.unsqueeze(2), inputs, torch.full_like(inputs, 1e3))
    inputs.requires_grad_(True)
    ours = lstm(inputs, mask)
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    reference, _ = pad_packed_sequence(
        torch.nn.LSTM.forward(lstm, packed)[0], batch_first=True, total_length=6
    )
    torch.testing.assert_close(ours, reference, rtol=0, atol=1e-12)
    assert not ours[~mask].any()
    weights = torch.randn_like(ours)
    ours_grad = torch.autograd.grad((ours * weights).sum(), [inputs, *lstm.parameters()])
    reference_grad = torch.autograd.grad((reference * weights).sum(), [inputs, *lstm.parameters()])
    for mine, theirs in zip(ours_grad, reference_grad, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-10)


def test_dropout_between_layers_only_in_training():
    torch.manual_seed(0)
    lstm = BiLSTM(3, 4, 2, dropout=0.5)
    inputs, mask = torch.randn(2, 5, 3), torch.ones(2, 5, dtype=torch.bool)
    lstm.eval()
    assert torch.equal(lstm(inputs, mask), lstm(inputs, mask))
    lstm.train()
    assert not torch.equal(lstm(inputs, mask), lstm(inputs, mask))


def brute_force_cost(lengths, call_cost):
    """Least Σ (call_cost + rows × longest) over every split of the length-sorted rows."""
    ordered = sorted(lengths, reverse=True)
    best = {0: 0.0}
    for end in range(1, len(ordered) + 1):
        best[end] = min(
            best[first] + call_cost + (end - first) * ordered[first] for first in range(end)
        )
    return best[len(ordered)]


@pytest.mark.parametrize("call_cost", [0.0, 5.0, 40.0, 1e9])
def test_length_groups_cover_every_row_once_at_least_cost(call_cost):
    lengths = [40, 3, 25, 1, 12, 30, 2, 7, 9, 18, 5, 1, 33, 4, 2, 6]
    groups = length_groups(lengths, call_cost)
    assert sorted(row for group in groups for row in group) == list(range(len(lengths)))
    for group in groups:  # longest first within a group, groups in decreasing length
        assert [lengths[r] for r in group] == sorted((lengths[r] for r in group), reverse=True)
    cost = sum(call_cost + len(g) * lengths[g[0]] for g in groups)
    assert cost == pytest.approx(brute_force_cost(lengths, call_cost))
    if call_cost == 1e9:  # a call dearer than any padding: one group
        assert len(groups) == 1
    if call_cost == 0.0:  # no call cost: one group per distinct length, no padding at all
        assert len(groups) == len(set(lengths))


def test_prediction_in_length_groups_equals_one_padded_batch(monkeypatch):
    monkeypatch.setattr(bilstm, "CALL_COST_FLOPS", 2e3)  # cheap calls: this tiny LSTM splits
    torch.manual_seed(0)
    lstm = BiLSTM(6, 5, 2).eval()
    lengths = torch.tensor([40, 3, 25, 1, 12, 30, 2, 7, 9, 18, 5, 1, 33, 4, 2, 6])
    mask = torch.arange(40).unsqueeze(0) < lengths.unsqueeze(1)
    inputs = torch.randn(len(lengths), 40, 6)
    calls_cost = 2 * 2 * bilstm.CALL_COST_FLOPS / lstm._flops_per_position()
    assert len(length_groups(lengths.tolist(), calls_cost)) > 1
    with torch.no_grad():
        grouped = lstm(inputs, mask)
        whole = lstm._encode(inputs, mask)
    torch.testing.assert_close(grouped, whole, rtol=0, atol=1e-6)
    assert not grouped[~mask].any()


@pytest.mark.parametrize("lengths", [[4, 2, 0, 3], [4, 4, 4, 4]])
def test_reverse_padded_reverses_each_row_within_its_length(lengths):
    """Rows reversed step by step as the definition says, whether or not every row is full
    (full rows take the whole-batch flip)."""
    inputs = torch.arange(4 * 4 * 2).view(4, 4, 2)
    expected = inputs.clone()
    for row, length in enumerate(lengths):
        expected[row, :length] = inputs[row, :length].flip(0)
    assert torch.equal(reverse_padded(inputs, torch.tensor(lengths)), expected)


def test_bfloat16_products_only_without_gradients():
    torch.manual_seed(0)
    lstm = BiLSTM(6, 5, 2).eval()
    lengths = torch.tensor([9, 3, 7, 1])
    mask = torch.arange(9).unsqueeze(0) < lengths.unsqueeze(1)
    inputs = torch.randn(4, 9, 6)
    exact = lstm(inputs, mask)
    lstm.set_precision("bfloat16")
    assert torch.equal(lstm(inputs, mask), exact)  # gradients on: float32 as trained
    with torch.no_grad():
        reduced = lstm(inputs, mask)
    assert reduced.dtype == torch.float32 and not reduced[~mask].any()
    error = (reduced - exact).abs().amax()
    assert 0 < error < 0.01 * exact.abs().amax()


def accumulator(steps_to_one: int = 333) -> BiLSTM:
    """A one-layer BiLSTM whose cell state grows by about 1/`steps_to_one` at each step of an
    all-ones input: input, forget and output gates near 1 (pre-activation 16), candidate
    tanh(0.003), no recurrent weights."""
    lstm = BiLSTM(1, 4, 1).eval()
    with torch.no_grad():
        for suffix in ("", "_reverse"):
            for name in ("weight_hh", "bias_ih", "bias_hh"):
                getattr(lstm, f"{name}_l0{suffix}").zero_()
            weights = getattr(lstm, f"weight_ih_l0{suffix}")  # gates i, f, g, o (4 rows each)
            weights.fill_(16.0)
            weights[8:12] = 1 / steps_to_one
    return lstm


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")
@pytest.mark.parametrize("onednn", [True, False])
def test_bfloat16_keeps_the_cell_state_in_float32(onednn: bool) -> None:
    """After 500 steps the cell state holds 1.5. In bfloat16 (8 significant bits) it would stop
    at 1.0, where a step adds less than half a unit in the last place, and the output would be
    tanh(1) = 0.76 instead of tanh(1.5) = 0.91. With or without oneDNN (torch's other kernels
    need the cell state in the products' dtype, so there the BiLSTM stays in float32)."""
    lstm = accumulator()
    inputs, mask = torch.ones(1, 500, 1), torch.ones(1, 500, dtype=torch.bool)
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=onednn):
        exact = lstm(inputs, mask)
        lstm.set_precision("bfloat16")
        reduced = lstm(inputs, mask)
    assert exact[0, -1, 0] == pytest.approx(0.905, abs=0.001)
    assert (reduced - exact).abs().amax() < 0.005
    if onednn and fused_lstm_keeps_float32_cell(torch.device("cpu")):
        assert not torch.equal(reduced, exact)  # the products did run in bfloat16
