"""The padded-batch BiLSTM gives what `nn.LSTM` gives on a packed sequence, values and gradients."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ner.tagger.bilstm import BiLSTM


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
