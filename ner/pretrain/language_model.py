"""The trainable ELMo biLM: forward and backward LSTM language models over shared char-CNN tokens.

Built on the inference module `ner.bilm.bilm.BiLM` (its char-CNN and projected LSTM), so the trained
weights are exactly what `BiLM` runs after `save` (options.json + weights.hdf5, no softmax).
Training follows bilm-tf (docs/pretraining.md, "What it does"): dropout on every LSTM input and on
the top output, one shared softmax, the loss is the mean of the forward and backward mean losses.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ner.bilm.bilm import BiLM
from ner.bilm.lstm import LSTMState
from ner.bilm.options import BiLMOptions
from ner.bilm.weights import read_weights
from ner.pretrain.softmax import SoftmaxOutput
from ner.pretrain.streams import Batch
from ner.pretrain.vocabulary import UNK_ID


class BidirectionalLM(nn.Module):
    """Char-CNN token encoder, a 2-direction projected LSTM stack and a shared softmax over V.

    Inputs are type ids into a char-id table (n_types, 50) given at construction (not a parameter);
    the char-CNN runs once per distinct type of a batch. Targets that are type ids ≥ V are `<UNK>`.
    """

    def __init__(
        self, options: BiLMOptions, vocab_size: int, char_table: torch.Tensor, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.bilm = BiLM(options, state="stateless")
        self.bilm.lstm.dropout = dropout
        with torch.no_grad():  # bilm-tf's highway init: gate bias −2, i.e. mostly pass x through
            for highway in self.bilm.char_cnn.highways:
                highway.bias[options.num_filters :].fill_(-2.0)
        self.softmax = SoftmaxOutput(vocab_size, options.projection_dim)
        self.dropout = dropout
        self.char_table = char_table  # (n_types, 50) shifted char ids

    def load_bilm_weights(self, weight_file: str) -> None:
        """Initialise char-CNN and LSTMs from an ELMo weights.hdf5 of the same architecture."""
        self.bilm.load_tf_arrays(read_weights(weight_file, self.bilm.options))

    def zero_state(self, batch_size: int) -> LSTMState:
        return self.bilm.lstm.zero_state(batch_size)

    def top_layer(self, batch: Batch, state: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        """Top LSTM outputs of both directions (2, B, T, P) and the state after the window."""
        inputs = torch.stack([batch.forward_inputs, batch.backward_inputs])  # (2, B, T)
        types, inverse = torch.unique(inputs, return_inverse=True)  # (U,), (2, B, T)
        device = self.softmax.weight.device
        char_ids = self.char_table[types.cpu()].to(device).long()  # (U, 50)
        tokens = self.bilm.char_cnn(char_ids)[inverse]  # (2, B, T, P)
        batch_size, steps = inputs.shape[1:]
        lengths = torch.full((batch_size,), steps, dtype=torch.long)
        outputs, state = self.bilm.lstm(tokens, lengths, state)
        top = F.dropout(outputs[-1], self.dropout, self.training)  # (2, B, T, P)
        return top, LSTMState(state.h.detach(), state.c.detach())

    def targets(self, batch: Batch) -> torch.Tensor:
        """Softmax targets (2, B, T): type ids, `<UNK>` where out of the vocabulary."""
        types = torch.stack([batch.forward_targets, batch.backward_targets])
        return torch.where(types < self.softmax.vocab_size, types, UNK_ID)

    def forward(
        self, batch: Batch, state: LSTMState, negatives: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, LSTMState]:
        """Sampled-softmax losses (forward, backward) of a window and the carried state."""
        top, state = self.top_layer(batch, state)
        targets = self.targets(batch).to(top.device)
        hidden = top.reshape(-1, top.shape[-1])  # (2·B·T, P), forward positions first
        losses = self.softmax.sampled_loss(hidden, targets.reshape(-1), negatives).view(2, -1)
        return losses[0].mean(), losses[1].mean(), state

    @torch.no_grad()
    def heldout_nll(self, batch: Batch, state: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        """Full-softmax summed NLL per direction (2,) of a window, and the carried state."""
        top, state = self.top_layer(batch, state)
        targets = self.targets(batch).to(top.device)
        nll = [self.softmax.full_nll(top[d].flatten(0, 1), targets[d].flatten()) for d in (0, 1)]
        return torch.stack(nll), state
