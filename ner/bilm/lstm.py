"""The ELMo LSTM: stacked layers with a projected, clipped state and skip connections.

As docs/bilm.md describes it ("The biLSTM", "The weights file").

Both directions run together: every tensor has a leading direction axis D (0 = forward,
1 = backward) and every direction reads its own input left to right, so the caller feeds the
backward direction its input already reversed (`reverse_padded`). Per step only the rows still
inside their sentence are computed (rows are sorted by length internally), and the input
projections of all steps are one batched matmul. Weights use the TF layout (x @ W, gates i, j,
f, o) and stay trainable; the forget-gate +1.0 of TF's LSTMCell is added to the stored bias at
run time, in float32, exactly as AllenNLP does when it loads B.
"""

import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from ner.bilm.weights import to_numpy
from ner.common.precision import active_dtype, product_dtype

FORWARD, BACKWARD = 0, 1
PROJECTION_BLOCK_ELEMENTS = 1 << 24  # floats of precomputed input projections (64 MiB)


class LSTMState(NamedTuple):
    """Recurrent state of every layer and direction: h (L, D, B, P), c (L, D, B, H)."""

    h: torch.Tensor
    c: torch.Tensor


def reverse_padded(inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse the first `lengths[b]` steps of each row of inputs (B, T, ...); padding stays put.
    Rows that all fill the batch (as a sorted batch's often do) are flipped whole: the same
    values, without the index arithmetic and gather (a sixth of the time)."""
    batch, steps = inputs.shape[:2]
    if bool((lengths == steps).all()):
        return inputs.flip(1)
    time = torch.arange(steps, device=inputs.device).unsqueeze(0)  # (1, T)
    lengths = lengths.to(inputs.device).unsqueeze(1)  # (B, 1)
    index = torch.where(time < lengths, lengths - 1 - time, time)  # (B, T)
    rows = torch.arange(batch, device=inputs.device).unsqueeze(1)
    return inputs[rows, index]


class ProjectedLSTMLayer(nn.Module):
    """One LSTM layer with projection and clipping, for D directions at once (TF gate order)."""

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        projection_dim: int,
        cell_clip: float | None,
        proj_clip: float | None,
        num_directions: int = 2,
    ) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.cell_clip = cell_clip
        self.proj_clip = proj_clip
        gates = 4 * hidden_dim
        self.w_input = nn.Parameter(torch.empty(num_directions, input_dim, gates))  # W_0[:P_in]
        self.w_state = nn.Parameter(
            torch.empty(num_directions, projection_dim, gates)
        )  # W_0[P_in:]
        self.bias = nn.Parameter(torch.zeros(num_directions, gates))  # B, without the forget +1
        self.w_proj = nn.Parameter(torch.empty(num_directions, hidden_dim, projection_dim))  # W_P_0
        forget = torch.zeros(gates)
        forget[2 * hidden_dim : 3 * hidden_dim] = 1.0
        self.register_buffer("forget_bias", forget, persistent=False)
        bound = 1.0 / math.sqrt(hidden_dim)
        for weight in (self.w_input, self.w_state, self.w_proj):
            nn.init.uniform_(weight, -bound, bound)

    def forward(
        self,
        inputs: torch.Tensor,
        counts: list[int],
        h: torch.Tensor,
        c: torch.Tensor,
        product_dtype: torch.dtype | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Run the recurrence over time-major inputs of rows sorted by decreasing length.

        inputs (D, T, B, P_in); counts[t] = rows still active at step t; h (D, B, P), c (D, B, H)
        initial state; product_dtype: of the matrix products (default: the inputs'), the cell
        state keeps the inputs' dtype. Returns outputs (D, T, B, P) (zero where padded) and the
        final h, c: each row's state after its last real step (its initial state if it has none),
        all in the inputs' dtype.
        """
        directions, steps, batch, input_dim = inputs.shape
        dtype, state_dtype = product_dtype or inputs.dtype, inputs.dtype
        w_input, w_state, w_proj = (w.to(dtype) for w in (self.w_input, self.w_state, self.w_proj))
        inputs, h = inputs.to(dtype), h.to(dtype)
        bias = (self.bias + self.forget_bias).unsqueeze(1).to(dtype)  # (D, 1, 4H)
        # Input projections are computed for `block` steps at a time in one matmul (rows still
        # active only), which bounds their memory at PROJECTION_BLOCK_ELEMENTS floats.
        block = max(1, PROJECTION_BLOCK_ELEMENTS // (directions * batch * bias.shape[-1]))
        projected: tuple[torch.Tensor, ...] = ()
        outputs: list[torch.Tensor] = []
        done_h: list[torch.Tensor] = []  # states of rows that finished, shortest rows first
        done_c: list[torch.Tensor] = []
        for step in range(steps):
            active = counts[step]
            if active < h.shape[1]:
                done_h.append(h[:, active:])
                done_c.append(c[:, active:])
                h, c = h[:, :active], c[:, :active]
            if active == 0:
                break  # no row is longer: the remaining steps are all padding
            if step % block == 0:
                rows = inputs[:, step : step + block, :active]  # (D, k, n, P_in)
                flat = rows.reshape(directions, -1, input_dim)
                projected = torch.baddbmm(bias, flat, w_input).view(*rows.shape[:3], -1)
                # One (D, n, 4H) tensor per step: unbind's backward stacks their gradients once,
                # where indexing step by step would materialise a full-size gradient per step.
                projected = projected.unbind(1)
            gates = torch.baddbmm(projected[step % block][:, :active], h, w_state)
            i, j, f, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(j)
            if self.cell_clip:
                c = c.clamp(-self.cell_clip, self.cell_clip)
            h = torch.bmm((torch.sigmoid(o) * torch.tanh(c)).to(dtype), w_proj)  # (D, n, P)
            if self.proj_clip:
                h = h.clamp(-self.proj_clip, self.proj_clip)
            outputs.append(functional.pad(h, (0, 0, 0, batch - active)) if active < batch else h)
        done_h.append(h)
        done_c.append(c)
        if len(outputs) == steps:  # no step is padding for every row
            padded = torch.stack(outputs, dim=1)
        else:
            size = (directions, steps - len(outputs), batch, self.w_proj.shape[-1])
            padding = inputs.new_zeros(size)  # steps after the longest row (all of them if none)
            padded = torch.cat([torch.stack(outputs, dim=1), padding], 1) if outputs else padding
        final_h, final_c = torch.cat(done_h[::-1], dim=1), torch.cat(done_c[::-1], dim=1)
        return padded.to(state_dtype), final_h.to(state_dtype), final_c.to(state_dtype)

    def load_tf_arrays(
        self, kernels: list[np.ndarray], biases: list[np.ndarray], projections: list[np.ndarray]
    ) -> None:
        """Load per-direction W_0 (P_in + P, 4H), B (4H,), W_P_0 (H, P) arrays."""
        input_dim = self.w_input.shape[1]
        with torch.no_grad():
            for d, (kernel, bias, projection) in enumerate(
                zip(kernels, biases, projections, strict=True)
            ):
                kernel = torch.as_tensor(np.asarray(kernel))
                self.w_input[d].copy_(kernel[:input_dim])
                self.w_state[d].copy_(kernel[input_dim:])
                self.bias[d].copy_(torch.as_tensor(np.asarray(bias)))
                self.w_proj[d].copy_(torch.as_tensor(np.asarray(projection)))

    def tf_arrays(self, direction: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """W_0, B, W_P_0 of one direction in the TF layout."""
        kernel = torch.cat([self.w_input[direction], self.w_state[direction]], dim=0)
        return to_numpy(kernel), to_numpy(self.bias[direction]), to_numpy(self.w_proj[direction])


def tf_cell_prefix(direction: int, layer: int) -> str:
    """HDF5 group of one LSTM cell, e.g. `RNN_0/RNN/MultiRNNCell/Cell1/LSTMCell`."""
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"


class ProjectedBiLSTM(nn.Module):
    """L stacked ProjectedLSTMLayers; layer l ≥ 1 adds its input to its output (skip connection)."""

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        projection_dim: int,
        num_layers: int,
        cell_clip: float | None,
        proj_clip: float | None,
        num_directions: int = 2,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.projection_dim = projection_dim
        self.num_directions = num_directions
        self.dropout = dropout  # on every layer's input while training (bilm-tf's DropoutWrapper)
        # Without gradients, the matrix products run in this dtype (`set_precision`)
        self._product_dtype: torch.dtype | None = None
        self.layers = nn.ModuleList(
            ProjectedLSTMLayer(
                input_dim if layer == 0 else projection_dim,
                hidden_dim,
                projection_dim,
                cell_clip,
                proj_clip,
                num_directions,
            )
            for layer in range(num_layers)
        )

    def set_precision(self, precision: str) -> None:
        """Run the matrix products in `precision` (``float32`` or ``bfloat16``, see
        `ner.common.precision`) while no gradient is taken; the cell state stays float32."""
        self._product_dtype = product_dtype(precision)  # checks the name

    def zero_state(self, batch_size: int) -> LSTMState:
        """All-zero state for batch_size rows."""
        like = self.layers[0].w_proj
        size = (len(self.layers), self.num_directions, batch_size)
        return LSTMState(
            like.new_zeros(*size, self.projection_dim), like.new_zeros(*size, self.hidden_dim)
        )

    def forward(
        self, inputs: torch.Tensor, lengths: torch.Tensor, state: LSTMState | None = None
    ) -> tuple[list[torch.Tensor], LSTMState]:
        """inputs (D, B, T, P_in), each direction read left to right over lengths (B,) steps.

        Returns one output (D, B, T, P) per layer (skip connection included, zero where padded)
        and the final state (each row's state after its last step).
        """
        batch, steps = inputs.shape[1], inputs.shape[2]
        if state is None:
            state = self.zero_state(batch)
        lengths = lengths.to(torch.long).cpu()
        order = torch.argsort(lengths, descending=True, stable=True)
        restore = torch.argsort(order)
        time = torch.arange(steps).unsqueeze(1)  # (T, 1)
        counts = (lengths[order].unsqueeze(0) > time).sum(dim=1).tolist()
        order, restore = order.to(inputs.device), restore.to(inputs.device)
        # (D, T, B, P_in) sorted rows, time-major, in the state's dtype: under autocast the
        # inputs come in bfloat16, and the cell state, outputs and carried state stay float32.
        hidden = inputs[:, order].transpose(1, 2).to(state.h.dtype)
        outputs, final_h, final_c = [], [], []
        for index, layer in enumerate(self.layers):
            hidden = functional.dropout(hidden, self.dropout, self.training)
            h, c = state.h[index][:, order], state.c[index][:, order]
            result, h, c = layer(hidden, counts, h, c, active_dtype(self._product_dtype))
            hidden = result + hidden if index > 0 else result
            outputs.append(hidden.transpose(1, 2)[:, restore])  # (D, B, T, P)
            final_h.append(h[:, restore])
            final_c.append(c[:, restore])
        return outputs, LSTMState(torch.stack(final_h), torch.stack(final_c))

    def load_tf_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Copy the `RNN_d/.../Cell{l}` datasets of a weights.hdf5 into this module."""
        for index, layer in enumerate(self.layers):
            prefixes = [tf_cell_prefix(d, index) for d in range(self.num_directions)]
            layer.load_tf_arrays(
                [arrays[f"{p}/W_0"] for p in prefixes],
                [arrays[f"{p}/B"] for p in prefixes],
                [arrays[f"{p}/W_P_0"] for p in prefixes],
            )

    def tf_arrays(self) -> dict[str, np.ndarray]:
        """Every layer and direction as weights.hdf5 datasets (TF layout, float32)."""
        arrays = {}
        for index, layer in enumerate(self.layers):
            for direction in range(self.num_directions):
                prefix = tf_cell_prefix(direction, index)
                kernel, bias, projection = layer.tf_arrays(direction)
                arrays[f"{prefix}/W_0"], arrays[f"{prefix}/B"] = kernel, bias
                arrays[f"{prefix}/W_P_0"] = projection
        return arrays
