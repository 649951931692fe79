"""A deliberately plain, per-time-step re-implementation of AllenNLP's ELMo biLM.

Used as (1) an independent check of the fast `BiLM` (tests compare the two, also on random weights
where both clips fire) and (2) the speed baseline of `experiments/bench/embed.py`. It follows
AllenNLP's `_ElmoCharacterEncoder` + `ElmoLstm`/`LstmCellWithProjection` structure on purpose: its
own weight reading, PyTorch gate order (i, f, g, o) obtained by reordering TF's blocks, AllenNLP's
negated highway gate, the char-CNN run on every slot of the (B, T+2, 50) tensor including padding,
and for each direction a loop over time steps that projects one step's input at a time. Like
AllenNLP it is stateful: row r of a call continues row r of the previous call until `reset_states`.
Do not optimise this file; `bilm.py` is the fast path.
"""

import json
from pathlib import Path

import h5py
import numpy as np
import torch
from torch.nn import functional

from ner.bilm.char_ids import BOS_CHAR_IDS, EOS_CHAR_IDS


class ReferenceBiLM:
    """AllenNLP's algorithm, step by step, inference only (no autograd)."""

    def __init__(
        self, options: dict, weights: h5py.File, dtype: torch.dtype = torch.float32
    ) -> None:
        """Read the weights (float32 on file, like AllenNLP), then compute in `dtype`."""
        self.dtype = dtype

        def _tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.asarray(array, dtype=np.float32)).to(dtype)

        cnn, lstm = options["char_cnn"], options["lstm"]
        self.activation = torch.relu if cnn.get("activation", "relu") == "relu" else torch.tanh
        table = weights["char_embed"][...]
        self.char_embed = _tensor(np.concatenate([np.zeros((1, table.shape[1])), table]))
        self.convs = []
        for i in range(len(cnn["filters"])):
            kernel = _tensor(weights[f"CNN/W_cnn_{i}"][...])[0].permute(2, 1, 0)  # (n, C, w)
            self.convs.append((kernel, _tensor(weights[f"CNN/b_cnn_{i}"][...])))
        self.highways = []
        for k in range(cnn["n_highway"]):
            group = weights[f"CNN_high_{k}"]
            # AllenNLP Highway: Linear(F, 2F) = [non-linear part; gate], gate = −carry.
            weight = torch.cat(
                [_tensor(group["W_transform"][...]).T, -_tensor(group["W_carry"][...]).T]
            )
            bias = torch.cat([_tensor(group["b_transform"][...]), -_tensor(group["b_carry"][...])])
            self.highways.append((weight, bias))
        self.proj = (
            _tensor(weights["CNN_proj/W_proj"][...]).T,
            _tensor(weights["CNN_proj/b_proj"][...]),
        )
        self.hidden = lstm["dim"]
        self.cell_clip, self.proj_clip = lstm.get("cell_clip"), lstm.get("proj_clip")
        self.cells = []  # [layer][direction] = (input W (4H, P_in), state W (4H, P), bias, proj W)
        for layer in range(lstm["n_layers"]):
            per_direction = []
            for direction in range(2):
                group = weights[f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"]
                kernel = group["W_0"][...].T  # (4H, P_in + P), TF blocks i, j, f, o
                bias = group["B"][...].copy()
                h = self.hidden
                bias[2 * h : 3 * h] += 1.0  # TF forget bias, added in float32 like AllenNLP
                order = np.r_[0:h, 2 * h : 3 * h, h : 2 * h, 3 * h : 4 * h]  # → i, f, j, o
                kernel, bias = kernel[order], bias[order]
                inputs = group["W_0"].shape[0] - group["W_P_0"].shape[1]
                per_direction.append(
                    (
                        _tensor(kernel[:, :inputs]),
                        _tensor(kernel[:, inputs:]),
                        _tensor(bias),
                        _tensor(group["W_P_0"][...]).T,
                    )
                )
            self.cells.append(per_direction)
        self.states: list[list[tuple[torch.Tensor, torch.Tensor]]] | None = None

    @classmethod
    def from_files(
        cls, options_file: str | Path, weight_file: str | Path, dtype: torch.dtype = torch.float32
    ) -> "ReferenceBiLM":
        options = json.loads(Path(options_file).read_text())
        with h5py.File(weight_file, "r") as weights:
            return cls(options, weights, dtype)

    def reset_states(self) -> None:
        self.states = None

    def token_layer(self, char_ids: torch.Tensor) -> torch.Tensor:
        """(B, T, 50) → (B, T, P): char-CNN, highway and projection on every slot."""
        batch, steps, chars = char_ids.shape
        embedded = functional.embedding(char_ids.reshape(-1, chars), self.char_embed)
        embedded = embedded.transpose(1, 2)  # (N, C, 50)
        pooled = []
        for kernel, bias in self.convs:
            convolved = functional.conv1d(embedded, kernel, bias)
            pooled.append(self.activation(torch.max(convolved, dim=-1)[0]))
        hidden = torch.cat(pooled, dim=-1)
        for weight, bias in self.highways:
            projected = functional.linear(hidden, weight, bias)
            size = hidden.shape[-1]
            gate = torch.sigmoid(projected[:, size:])
            hidden = gate * hidden + (1 - gate) * torch.relu(projected[:, :size])
        return functional.linear(hidden, *self.proj).view(batch, steps, -1)

    def __call__(self, char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, 50) without boundaries → (layers (B, L+1, T, 2P), mask (B, T)), like `BiLM`."""
        with torch.no_grad():
            mask = (char_ids > 0).long().sum(-1) > 0
            lengths = mask.sum(-1)
            batch, steps = mask.shape
            wrapped = torch.zeros(batch, steps + 2, 50, dtype=torch.long)
            wrapped[:, 1 : steps + 1] = char_ids
            for row in range(batch):
                wrapped[row, 0] = torch.tensor(BOS_CHAR_IDS)
                wrapped[row, lengths[row] + 1] = torch.tensor(EOS_CHAR_IDS)
            full_mask = torch.arange(steps + 2).unsqueeze(0) < (lengths + 2).unsqueeze(1)
            tokens = self.token_layer(wrapped) * full_mask.unsqueeze(-1)
            layers = [torch.cat([tokens, tokens], -1), *self._lstm(tokens, lengths + 2)]
            stacked = torch.stack(layers, 1)[:, :, 1 : steps + 1]
            return stacked * mask[:, None, :, None], mask

    def _lstm(self, tokens: torch.Tensor, lengths: torch.Tensor) -> list[torch.Tensor]:
        """ElmoLstm: sort by length, run each layer and direction, skip connections, unsort."""
        batch = tokens.shape[0]
        sorted_lengths, order = torch.sort(lengths, descending=True)
        restore = torch.argsort(order)
        if self.states is None:
            self.states = [[self._zeros(batch) for _ in range(2)] for _ in self.cells]
        outputs = []
        forward_input = backward_input = tokens[order]
        for layer, cells in enumerate(self.cells):
            results = []
            for direction, inputs in enumerate((forward_input, backward_input)):
                h, c = self.states[layer][direction]
                if h.shape[0] < batch:  # new rows start from zeros
                    zero_h, zero_c = self._zeros(batch - h.shape[0])
                    h, c = torch.cat([h, zero_h]), torch.cat([c, zero_c])
                output, h_new, c_new = self._direction(
                    inputs,
                    sorted_lengths,
                    cells[direction],
                    h[:batch][order],
                    c[:batch][order],
                    direction == 0,
                )
                if layer > 0:
                    output = output + inputs
                h[:batch], c[:batch] = h_new[restore], c_new[restore]
                self.states[layer][direction] = (h, c)
                results.append(output)
            forward_input, backward_input = results
            outputs.append(torch.cat(results, -1)[restore])
        return outputs

    def _zeros(self, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        projection = self.cells[0][0][3].shape[0]
        return (
            torch.zeros(rows, projection, dtype=self.dtype),
            torch.zeros(rows, self.hidden, dtype=self.dtype),
        )

    def _direction(
        self,
        inputs: torch.Tensor,
        lengths: torch.Tensor,
        cell: tuple[torch.Tensor, ...],
        h: torch.Tensor,
        c: torch.Tensor,
        go_forward: bool,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """LstmCellWithProjection.forward: one time step at a time, only rows still in range."""
        input_weight, state_weight, bias, projection = cell
        batch, steps, _ = inputs.shape
        output = torch.zeros(batch, steps, projection.shape[0], dtype=self.dtype)
        size = self.hidden
        h, c = h.clone(), c.clone()
        for step in range(steps):
            index = step if go_forward else steps - 1 - step
            active = int((lengths > index).sum())
            if active == 0:
                continue
            projected_input = functional.linear(inputs[:active, index], input_weight)
            projected_state = functional.linear(h[:active], state_weight, bias)
            gates = projected_input + projected_state
            input_gate = torch.sigmoid(gates[:, 0:size])
            forget_gate = torch.sigmoid(gates[:, size : 2 * size])
            memory_init = torch.tanh(gates[:, 2 * size : 3 * size])
            output_gate = torch.sigmoid(gates[:, 3 * size : 4 * size])
            memory = input_gate * memory_init + forget_gate * c[:active]
            if self.cell_clip:
                memory = torch.clamp(memory, -self.cell_clip, self.cell_clip)
            state = functional.linear(output_gate * torch.tanh(memory), projection)
            if self.proj_clip:
                state = torch.clamp(state, -self.proj_clip, self.proj_clip)
            c = c.clone()
            h = h.clone()
            c[:active], h[:active] = memory, state
            output[:active, index] = state
        return output, h, c
