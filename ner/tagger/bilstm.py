"""A bidirectional LSTM over right-padded batches that runs torch's fused CPU kernel.

`nn.LSTM` on a `PackedSequence` gives the right answer for sentences of different lengths, but
on CPU it takes a slow path: its backward zeroes a (tokens, 4H) gradient buffer at every time
step, which made up a quarter of a training step of the tagger. On a plain padded tensor torch
runs one fused (oneDNN) kernel per layer and direction instead. Right padding is harmless for
the forward direction; for the backward direction each row is reversed within its own length,
so padding stays at the end and every sentence starts from a zero state, exactly like packing.

The fused kernel computes every padded position, though, so a batch mixing a 40-token sentence
with 3-token ones (the micro-batches of `ner-serve`) pays for 40 steps of every row. Without
gradients (prediction) the rows are therefore run in groups of similar length, chosen to
minimise padded positions plus a fixed cost per kernel call; training keeps one call per layer.
"""

import torch
from torch import nn

from ner.bilm.lstm import reverse_padded
from ner.common.batching import length_order
from ner.common.precision import active_dtype, fused_lstm_keeps_float32_cell, product_dtype

# One fused call costs about as much as this much of its own arithmetic (0.7 ms per layer and
# direction at ~60 GFLOP/s on one core), so a group of rows must save more padding than that.
CALL_COST_FLOPS = 4e7


def length_groups(lengths: list[int], call_cost: float) -> list[list[int]]:
    """Rows split into groups that minimise Σ (call_cost + rows × longest length): groups of
    consecutive rows in decreasing length (exact over such splits, O(B²)). lengths: (B,).

    Ordered like every other batching (`ner.common.batching`), but cut by least total cost
    rather than a token budget: the whole batch is in hand, and a fused call's fixed cost makes
    a greedy budget cut either too many groups or too few."""
    order = length_order(lengths)
    # best[i]: least cost of the rows order[:i]; start[i]: where the last of those groups begins
    best, start = [0.0] + [float("inf")] * len(order), [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for first in range(end):
            cost = best[first] + call_cost + (end - first) * lengths[order[first]]
            if cost < best[end]:
                best[end], start[end] = cost, first
    groups, end = [], len(order)
    while end:
        groups.append(order[start[end] : end])
        end = start[end]
    return groups[::-1]


class BiLSTM(nn.LSTM):
    """`nn.LSTM(bidirectional=True, batch_first=True)` (same parameters and state dict) whose
    `forward` takes a right-padded batch and its mask and returns zeros at padding.

    Dropout between layers (`dropout`) is applied to each layer's output except the last, in
    training mode, as `nn.LSTM` does.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, dropout: float = 0.0):
        super().__init__(
            input_size,
            hidden_size,
            num_layers=num_layers,
            bidirectional=True,
            batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        # Without gradients, the fused kernels run in this dtype (`set_precision`)
        self._product_dtype: torch.dtype | None = None

    def set_precision(self, precision: str) -> None:
        """Run the matrix products in `precision` (``float32`` or ``bfloat16``, see
        `ner.common.precision`) while no gradient is taken; training stays float32."""
        self._product_dtype = product_dtype(precision)  # checks the name

    def _direction(self, layer: int, suffix: str) -> list[torch.Tensor]:
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        return [getattr(self, f"{name}_l{layer}{suffix}") for name in names]

    def _run(self, inputs: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
        """One layer, one direction, from a zero state: (B, T, I) → (B, T, H), its products in
        the dtype of `set_precision` (while no gradient is taken), returned in the inputs' dtype.
        The cell state stays in the inputs' dtype: a bfloat16 cell state (8 significant bits)
        stops growing once it is large against what each step adds. Where the fused kernel cannot
        keep it so (`fused_lstm_keeps_float32_cell`), everything runs in the inputs' dtype."""
        dtype = active_dtype(self._product_dtype) or inputs.dtype
        if dtype != inputs.dtype and not fused_lstm_keeps_float32_cell(inputs.device):
            dtype = inputs.dtype
        size = (1, inputs.size(0), self.hidden_size)
        hidden, cell = inputs.new_zeros(size, dtype=dtype), inputs.new_zeros(size)
        # torch.lstm is the kernel behind nn.LSTM: (input, (h0, c0), weights, has_biases,
        # num_layers, dropout, train, bidirectional, batch_first) → (output, h_n, c_n).
        output, _, _ = torch.lstm(
            inputs.to(dtype),
            (hidden, cell),
            [w.to(dtype) for w in weights],
            True,
            1,
            0.0,
            self.training,
            False,
            True,
        )
        return output.to(inputs.dtype)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """inputs: (B, T, input_size); mask: (B, T) bool, right-padded → (B, T, 2H)."""
        if torch.is_grad_enabled() or inputs.size(0) < 2:
            return self._encode(inputs, mask)
        lengths = mask.sum(1).tolist()
        calls = 2 * self.num_layers  # fused calls per group
        groups = length_groups(lengths, calls * CALL_COST_FLOPS / self._flops_per_position())
        if len(groups) == 1:
            return self._encode(inputs, mask)
        outputs = inputs.new_zeros(*mask.shape, 2 * self.hidden_size)  # (B, T, 2H)
        for rows in groups:
            longest = lengths[rows[0]]
            index = torch.tensor(rows, device=inputs.device)
            outputs[index, :longest] = self._encode(inputs[index, :longest], mask[index, :longest])
        return outputs

    def _flops_per_position(self) -> float:
        """Arithmetic of one padded position, every layer and direction."""
        size, total = self.hidden_size, 0.0
        for layer in range(self.num_layers):
            inputs = self.input_size if layer == 0 else 2 * size
            total += 2 * 2 * 4 * size * (inputs + size)
        return total

    def _encode(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`forward` as one fused call per layer and direction over the whole padded batch."""
        lengths = mask.sum(1)
        outputs = inputs
        for layer in range(self.num_layers):
            if layer > 0:
                outputs = nn.functional.dropout(outputs, self.dropout, self.training)
            forward = self._run(outputs, self._direction(layer, ""))
            # The backward direction reads each sentence reversed within its length.
            flipped = reverse_padded(outputs, lengths)
            backward = self._run(flipped, self._direction(layer, "_reverse"))
            outputs = torch.cat([forward, reverse_padded(backward, lengths)], dim=2)
        return outputs * mask.unsqueeze(2)
