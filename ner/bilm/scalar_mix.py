"""A learned (or fixed) weighted sum of biLM layers: γ · Σ_k s_k · A_k (docs/bilm.md, "Scalar mix").

As in AllenNLP's ScalarMix, s = softmax(w) with w initialised to 0 and γ to 1, both trainable.
Options: a subset of layers (e.g. top only `[2]`, or `[0, 1]`), fixed normalised weights (then w and
γ are frozen, like AllenNLP's `scalar_mix_parameters`), and a layer norm. The layer norm differs
from AllenNLP's, which takes one mean and variance over the whole masked batch: here each
sentence is normalised over its own unmasked positions, so its vectors do not depend on the
other sentences in its batch. AllenNLP's `Elmo` also mixes the boundary-inclusive activations
(its statistics include BOS/EOS); the biLM here returns layers without boundaries.
"""

from collections.abc import Sequence

import torch
from torch import nn

from ner.common.errors import NerError


class MixError(NerError, ValueError):
    """Scalar-mix settings that do not fit the biLM; `option` names the argument at fault."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def mixed_layers(
    num_layers: int | None,
    layers: Sequence[int] | None = None,
    fixed_weights: Sequence[float] | None = None,
) -> list[int] | None:
    """The layers a mix of a biLM with `num_layers` layers uses (default: all), after checking
    `layers` (distinct, in range) and `fixed_weights` (one per mixed layer, ≥ 0, summing to 1);
    raises `MixError`. With `num_layers` None (the biLM is not at hand: training checks its
    config before loading anything) the checks that need it are skipped, and the default
    `layers` is None."""
    chosen = None if layers is None else [int(i) for i in layers]
    if chosen is not None and (not chosen or len(set(chosen)) != len(chosen)):
        raise MixError("layers", f"layers must be distinct and non-empty, got {chosen}")
    if num_layers is not None:
        if chosen is not None and any(not 0 <= i < num_layers for i in chosen):
            raise MixError(
                "layers",
                f"layers out of range for the biLM's {num_layers} layers (0 to "
                f"{num_layers - 1}), got {chosen}",
            )
        chosen = list(range(num_layers)) if chosen is None else chosen
    if fixed_weights is not None:
        weights = [float(w) for w in fixed_weights]
        if (
            (chosen is not None and len(weights) != len(chosen))
            or any(w < 0 for w in weights)
            or abs(sum(weights) - 1.0) > 1e-6
        ):
            count = f"{len(chosen)} weights (one per mixed layer {chosen})" if chosen else "weights"
            raise MixError(
                "fixed_weights", f"expected {count}, each ≥ 0, summing to 1; got {weights}"
            )
    return chosen


class ScalarMix(nn.Module):
    """Mixes L biLM layers (B, L, T, D) into one representation (B, T, D)."""

    def __init__(
        self,
        num_layers: int,
        layers: Sequence[int] | None = None,
        fixed_weights: Sequence[float] | None = None,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        self.layers: list[int] = mixed_layers(num_layers, layers, fixed_weights)  # type: ignore[assignment]
        self.layer_norm = layer_norm
        self.fixed = fixed_weights is not None
        if fixed_weights is None:
            self.scalar_parameters = nn.Parameter(torch.zeros(len(self.layers)))
        else:
            weights = torch.tensor([float(w) for w in fixed_weights])
            self.scalar_parameters = nn.Parameter(weights, requires_grad=False)
        self.gamma = nn.Parameter(torch.tensor(1.0), requires_grad=not self.fixed)

    def normalized_weights(self) -> torch.Tensor:
        """The mixing weights s (len(layers),), summing to 1."""
        if self.fixed:
            return self.scalar_parameters
        return torch.softmax(self.scalar_parameters, dim=0)

    def forward(self, layers: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """layers (B, L, T, D), mask (B, T) → (B, T, D)."""
        if mask is None:
            mask = layers.new_ones(layers.shape[0], layers.shape[2])
        mask = mask.to(layers.dtype)
        weights = self.normalized_weights()
        pieces = []
        for weight, index in zip(weights, self.layers, strict=True):
            tensor = layers[:, index]  # (B, T, D)
            pieces.append(weight * (self._normalize(tensor, mask) if self.layer_norm else tensor))
        return self.gamma * sum(pieces)

    @staticmethod
    def _normalize(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each sentence's own mean and variance over its unmasked elements (T_i × D values), so
        a sentence's vectors never depend on the other sentences of its batch (a row chunk of a
        training step, a server's micro-batch). A row without unmasked positions stays as it is
        up to the constant shift and scale (its values are padding)."""
        broadcast = mask.unsqueeze(-1)  # (B, T, 1)
        count = (mask.sum(dim=1) * tensor.shape[-1]).clamp(min=1)[:, None, None]  # (B, 1, 1)
        masked = tensor * broadcast
        mean = masked.sum(dim=(1, 2), keepdim=True) / count
        variance = (((masked - mean) * broadcast) ** 2).sum(dim=(1, 2), keepdim=True) / count
        return (tensor - mean) / torch.sqrt(variance + 1e-13)
