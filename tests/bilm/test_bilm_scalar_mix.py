"""ScalarMix: trainable softmax weights and γ, layer subsets, fixed weights, layer norm."""

import pytest
import torch

from ner.bilm.scalar_mix import ScalarMix


@pytest.fixture
def layers() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    mask = torch.tensor([[True, True, True, False], [True, False, False, False]])
    return torch.randn(2, 3, 4, 5) * 3 + 1, mask


def test_default_is_the_mean_and_everything_is_trainable(layers):
    tensor, mask = layers
    mix = ScalarMix(3)
    torch.testing.assert_close(mix.normalized_weights(), torch.full((3,), 1 / 3))
    output = mix(tensor, mask)
    torch.testing.assert_close(output, tensor.mean(dim=1))
    output.pow(2).sum().backward()
    assert mix.scalar_parameters.grad.abs().sum() > 0 and mix.gamma.grad != 0
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([0.0, 1.0, 2.0]))
        mix.gamma.fill_(2.0)
    weights = torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0)
    expected = 2.0 * sum(w * tensor[:, k] for k, w in enumerate(weights))
    torch.testing.assert_close(mix(tensor, mask), expected)


def test_layer_subsets(layers):
    tensor, mask = layers
    torch.testing.assert_close(ScalarMix(3, layers=[2])(tensor, mask), tensor[:, 2])
    torch.testing.assert_close(ScalarMix(3, layers=[0, 1])(tensor, mask), tensor[:, :2].mean(1))
    assert ScalarMix(3, layers=[0, 1]).normalized_weights().shape == (2,)


def test_fixed_weights_are_used_as_given_and_frozen(layers):
    tensor, mask = layers
    mix = ScalarMix(3, fixed_weights=[0.2, 0.0, 0.8])
    torch.testing.assert_close(mix(tensor, mask), 0.2 * tensor[:, 0] + 0.8 * tensor[:, 2])
    assert not any(p.requires_grad for p in mix.parameters())
    top = ScalarMix(3, layers=[1, 2], fixed_weights=[0.5, 0.5])
    torch.testing.assert_close(top(tensor, mask), tensor[:, 1:].mean(1))


def test_layer_norm_uses_one_mean_and_variance_per_sentence_over_its_unmasked_elements(layers):
    tensor, mask = layers
    mix = ScalarMix(3, layers=[1], layer_norm=True)
    output = mix(tensor, mask)
    for row in range(len(mask)):
        values = tensor[row, 1][mask[row]]  # (the sentence's positions, D)
        expected = (tensor[row, 1] - values.mean()) / torch.sqrt(values.var(unbiased=False) + 1e-13)
        torch.testing.assert_close(output[row, mask[row]], expected[mask[row]])
        normalized = output[row][mask[row]].detach()
        assert abs(float(normalized.mean())) < 1e-5
        assert abs(float(normalized.std(unbiased=False)) - 1) < 1e-5


def test_layer_norm_gives_a_sentence_the_same_vectors_whatever_else_is_in_the_batch(layers):
    """A chunked training step and a server's micro-batch must see each sentence alone."""
    tensor, mask = layers
    mix = ScalarMix(3, layer_norm=True)
    together = mix(tensor, mask)
    for row in range(len(mask)):
        length = int(mask[row].sum())
        alone = mix(tensor[row : row + 1, :, :length], mask[row : row + 1, :length])
        torch.testing.assert_close(alone[0], together[row, :length])
    bigger = torch.cat([tensor, torch.randn(1, 3, 4, 5) * 10 - 4])
    widened = torch.cat([mask, torch.tensor([[True, True, True, True]])])
    torch.testing.assert_close(mix(bigger, widened)[: len(mask)][mask], together[mask])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"layers": []}, "distinct and non-empty"),
        ({"layers": [1, 1]}, "distinct and non-empty"),
        ({"layers": [3]}, "out of range"),
        ({"fixed_weights": [0.5, 0.5]}, r"expected 3 weights \(one per mixed layer \[0, 1, 2\]\)"),
        ({"fixed_weights": [1.0, 1.0, 1.0]}, "summing to 1"),
        ({"fixed_weights": [1.5, -0.5, 0.0]}, "summing to 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ScalarMix(3, **kwargs)
