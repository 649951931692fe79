"""Context-free token encoder of ELMo: char embedding → CNN → max-pool → highway → projection.

Weights follow the TF layout of docs/bilm.md ("The weights file"); `load_tf_arrays` / `tf_arrays`
convert both ways, so the module can be trained (pretraining) and dumped back to weights.hdf5.
"""

from collections.abc import Mapping

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from ner.bilm.char_ids import MAX_CHARACTERS_PER_TOKEN
from ner.bilm.options import BiLMOptions
from ner.bilm.weights import to_numpy

CONV_GROUP_ROWS = 256  # distinct tokens per convolution call (rows of similar length)


class CharCNN(nn.Module):
    """Maps the 50 character ids of each token to a P-dim token vector."""

    def __init__(self, options: BiLMOptions) -> None:
        super().__init__()
        self.options = options
        num_filters = options.num_filters
        # Row 0 = sentence padding (always zero); rows 1..261 = raw char ids 0..260 (shifted +1).
        self.char_embed = nn.Embedding(
            options.char_vocabulary + 1, options.char_embedding_dim, padding_idx=0
        )
        self.convs = nn.ModuleList(
            nn.Conv1d(options.char_embedding_dim, count, width) for width, count in options.filters
        )
        # Each highway layer is one (F → 2F) linear map: [:F] the non-linear branch ("W_transform"),
        # [F:] the gate ("W_carry"): y = g ⊙ relu(transform) + (1 − g) ⊙ x, g = σ(carry).
        self.highways = nn.ModuleList(
            nn.Linear(num_filters, 2 * num_filters) for _ in range(options.n_highway)
        )
        self.projection = nn.Linear(num_filters, options.projection_dim)
        self._activation = torch.relu if options.activation == "relu" else torch.tanh
        self._max_width = max(width for width, _ in options.filters)

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """char_ids (..., 50) shifted ids → token vectors (..., P)."""
        leading = char_ids.shape[:-1]
        if torch.is_autocast_enabled(char_ids.device.type):
            rows = char_ids.reshape(-1, MAX_CHARACTERS_PER_TOKEN)
            pooled = self._pooled_as_one_product(rows, torch.get_autocast_dtype(rows.device.type))
            return self._highway_and_projection(pooled).reshape(*leading, -1)
        # Each distinct token (and the padding slot) is encoded once: about half the tokens of a
        # batch of sentences repeat one. flat: (U, 50); inverse: (N,) each token's row in flat.
        flat, inverse = torch.unique(
            char_ids.reshape(-1, MAX_CHARACTERS_PER_TOKEN), dim=0, return_inverse=True
        )
        # Rows sorted by length and convolved in groups, each cut to its own useful width: short
        # tokens (most of them) no longer pay for the longest one's character positions.
        widths = self._useful_widths(flat)  # (U,)
        order = torch.argsort(widths, stable=True)
        parts = []
        for group in order.split(CONV_GROUP_ROWS):
            chars = flat[group, : int(widths[group[-1]])]  # (G, W) with W <= 50
            embedded = self.char_embed(chars).transpose(1, 2)  # (G, C, W)
            pooled = [self._activation(conv(embedded).amax(dim=-1)) for conv in self.convs]
            parts.append(torch.cat(pooled, dim=-1))  # (G, F)
        hidden = torch.cat(parts)[torch.argsort(order)]  # (U, F) back in the order of `flat`
        return self._highway_and_projection(hidden)[inverse].reshape(*leading, -1)  # (..., P)

    def _highway_and_projection(self, hidden: torch.Tensor) -> torch.Tensor:
        """Pooled filter outputs (N, F) → token vectors (N, P)."""
        num_filters = hidden.shape[-1]
        for highway in self.highways:
            both = highway(hidden)  # (N, 2F)
            gate = torch.sigmoid(both[:, num_filters:])
            hidden = gate * torch.relu(both[:, :num_filters]) + (1 - gate) * hidden
        return self.projection(hidden)

    def _pooled_as_one_product(self, rows: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Activated max-pooled filter outputs (N, F) of char-id rows (N, 50), every filter in one
        matrix product in `dtype` per group of rows: what `forward` computes under autocast
        (mixed-precision pretraining, whose rows are distinct tokens already, so they are not made
        unique again). Done as convolutions, the five small products and their backward passes
        cost more than this one larger product in bfloat16.

        The window of K characters (the widest filter's width) at each position is one row of a
        (positions, K·C) matrix and the filters, zero beyond their own width, are one (K·C, F)
        matrix, so each product is a convolution's sum in another order. Positions run to the
        group's useful width W: a window that a filter of width w lacks in the convolution over W
        positions (past W − w) lies in the row's repeated tail, equal to a window the
        convolution has; past character 50 (only when W + K − 1 > 50) a filter's positions are cut
        at 50 − w, so the zero padding there only meets zero weights. The bias comes after the
        max (the same value: rounding is monotonic).
        """
        kernel = self._max_width
        widest = [functional.pad(c.weight, (0, kernel - c.weight.shape[-1])) for c in self.convs]
        weight = torch.cat(widest)  # (F, C, K)
        weight = weight.flatten(1).T.to(dtype)  # (C·K, F), rows in the order of `unfold`
        table = self.char_embed.weight.to(dtype)
        widths = self._useful_widths(rows)  # (N,)
        order = torch.argsort(widths, stable=True)
        padded = functional.pad(rows, (0, kernel - 1))  # (N, 50 + K - 1), char id 0: zero vectors
        counts = [count for _, count in self.options.filters]
        parts = []
        for group in order.split(CONV_GROUP_ROWS):
            width = int(widths[group[-1]])
            chars = padded[group, : width + kernel - 1]
            embedded = functional.embedding(chars, table, self.char_embed.padding_idx)
            products = embedded.unfold(1, kernel, 1).flatten(2) @ weight  # (G, W, F)
            if width + kernel - 1 <= MAX_CHARACTERS_PER_TOKEN:
                parts.append(products.amax(dim=1))
            else:  # a filter of width w has 50 - w + 1 positions
                columns = products.split(counts, dim=-1)
                parts.append(
                    torch.cat(
                        [
                            part[:, : MAX_CHARACTERS_PER_TOKEN - w + 1].amax(dim=1)
                            for (w, _), part in zip(self.options.filters, columns, strict=True)
                        ],
                        dim=-1,
                    )
                )
        pooled = torch.cat(parts)[torch.argsort(order)].float()
        return self._activation(pooled + torch.cat([conv.bias for conv in self.convs]))

    def _useful_widths(self, flat: torch.Tensor) -> torch.Tensor:
        """Character positions each row (U, 50) needs for an exact max-pool: (U,) int64.

        Past its last real character a row repeats one id (char padding, or 0 for an empty slot), so
        every window lying wholly in that tail has the same value; keeping the row plus one such
        window (max kernel width) leaves each max unchanged and skips the rest of the padding.
        """
        positions = torch.arange(1, MAX_CHARACTERS_PER_TOKEN + 1, device=flat.device)
        longest = ((flat != flat[:, -1:]) * positions).amax(dim=1)  # (U,) 0 for an all-tail row
        return (longest + self._max_width).clamp(max=MAX_CHARACTERS_PER_TOKEN)

    def load_tf_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Copy the char-CNN datasets of a weights.hdf5 (already shape-checked) into this module."""
        with torch.no_grad():
            table = torch.as_tensor(np.asarray(arrays["char_embed"]))  # (261, C) for bilm-tf
            self.char_embed.weight[0].zero_()
            self.char_embed.weight[1:].copy_(table)
            for i, conv in enumerate(self.convs):
                kernel = torch.as_tensor(np.asarray(arrays[f"CNN/W_cnn_{i}"]))  # (1, w, C, n)
                conv.weight.copy_(kernel[0].permute(2, 1, 0))  # (n, C, w)
                conv.bias.copy_(torch.as_tensor(np.asarray(arrays[f"CNN/b_cnn_{i}"])))
            for k, highway in enumerate(self.highways):
                transform = np.asarray(arrays[f"CNN_high_{k}/W_transform"])  # (F, F)
                carry = np.asarray(arrays[f"CNN_high_{k}/W_carry"])  # (F, F)
                highway.weight.copy_(torch.as_tensor(np.concatenate([transform, carry], 1).T))
                bias = [arrays[f"CNN_high_{k}/b_transform"], arrays[f"CNN_high_{k}/b_carry"]]
                highway.bias.copy_(torch.as_tensor(np.concatenate(bias)))
            self.projection.weight.copy_(torch.as_tensor(np.asarray(arrays["CNN_proj/W_proj"])).T)
            self.projection.bias.copy_(torch.as_tensor(np.asarray(arrays["CNN_proj/b_proj"])))

    def tf_arrays(self) -> dict[str, np.ndarray]:
        """This module's parameters as weights.hdf5 datasets (TF layout, float32)."""
        arrays = {"char_embed": to_numpy(self.char_embed.weight[1:])}
        for i, conv in enumerate(self.convs):
            arrays[f"CNN/W_cnn_{i}"] = to_numpy(conv.weight.permute(2, 1, 0))[None]
            arrays[f"CNN/b_cnn_{i}"] = to_numpy(conv.bias)
        num_filters = self.options.num_filters
        for k, highway in enumerate(self.highways):
            weight = to_numpy(highway.weight.T)  # (F, 2F)
            arrays[f"CNN_high_{k}/W_transform"] = weight[:, :num_filters].copy()
            arrays[f"CNN_high_{k}/W_carry"] = weight[:, num_filters:].copy()
            arrays[f"CNN_high_{k}/b_transform"] = to_numpy(highway.bias[:num_filters])
            arrays[f"CNN_high_{k}/b_carry"] = to_numpy(highway.bias[num_filters:])
        arrays["CNN_proj/W_proj"] = to_numpy(self.projection.weight.T)
        arrays["CNN_proj/b_proj"] = to_numpy(self.projection.bias)
        return arrays
