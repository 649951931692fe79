"""Export to options.json + weights.hdf5: `ner.bilm.BiLM` reloads the trained biLM exactly, and a
new run can start from the exported weights."""

import json
from pathlib import Path

import h5py
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.bilm.weights import expected_shapes
from ner.common.checkpoints import load_checkpoint
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import Batch
from ner.pretrain.trainer import train

SENTENCES = [["Reuters", "said", "the", "bank", "rose", "."], ["Shares", "fell", "in", "Tokyo"]]


def trained(tiny_config, tmp_path: Path) -> tuple[dict, Path]:
    metrics = train(tiny_config("pretrain.max_steps=6", output_dir=tmp_path / "run"))
    return metrics, tmp_path / "run"


def top_layer_by_training_path(model: BidirectionalLM, tokens: list[str]) -> torch.Tensor:
    """(T, 2P) top layer of one sentence computed the way training computes it (type-id streams)."""
    types = ["<S>", *tokens, "</S>"]
    model.char_table = batch_to_ids([types])[0]
    ids = torch.arange(len(types))[None]  # (1, n + 2)
    batch = Batch(ids, ids, ids.flip(1), ids.flip(1))
    model.eval()
    with torch.no_grad():
        top, _ = model.top_layer(batch, model.zero_state(1))  # (2, 1, n + 2, P)
    forward, backward = top[0, 0], top[1, 0].flip(0)
    return torch.cat([forward, backward], dim=-1)[1:-1]


def test_round_trip_through_bilm_is_exact(tiny_config, tmp_path: Path) -> None:
    metrics, run = trained(tiny_config, tmp_path)
    options = json.loads((run / "options.json").read_text())
    assert options["char_cnn"]["n_characters"] == 262
    assert options["lstm"]["use_skip_connections"] is True
    with h5py.File(run / "weights.hdf5") as handle:
        names = set()
        handle.visititems(
            lambda name, obj: names.add(name) if isinstance(obj, h5py.Dataset) else None
        )
    assert names == set(expected_shapes(BiLMOptions.from_dict(options)))  # no softmax, nothing else
    assert (run / "vocab.txt").read_text().splitlines()[:3] == ["<S>", "</S>", "<UNK>"]
    assert metrics["steps"] == 6 and metrics["perplexity"]["forward"] > 1

    checkpoint = load_checkpoint(run / "checkpoint.pt")
    model = BidirectionalLM(
        BiLMOptions.from_dict(options), checkpoint["fingerprint"]["vocab_size"], torch.zeros(0)
    )
    model.load_state_dict(checkpoint["model"])
    bilm = BiLM.from_files(run / "options.json", run / "weights.hdf5", state="stateless")
    layers, mask = bilm(batch_to_ids(SENTENCES))  # (2, 3, T, 2P)
    for row, tokens in enumerate(SENTENCES):
        expected = top_layer_by_training_path(model, tokens)
        # Same weights, same arithmetic; only the batch shapes (and so float rounding) differ.
        assert torch.allclose(layers[row, 2, : len(tokens)], expected, atol=1e-6, rtol=0)
    assert mask.sum(1).tolist() == [6, 4]


def test_training_can_start_from_exported_weights(tiny_config, tmp_path: Path) -> None:
    _, run = trained(tiny_config, tmp_path)
    cfg = tiny_config(
        "pretrain.max_steps=0",
        f"+pretrain.init_from={{options: {run / 'options.json'}, weights: {run / 'weights.hdf5'}}}",
        "model.lstm.dim=999",  # ignored: the architecture comes from init_from.options
        output_dir=tmp_path / "continued",
    )
    train(cfg)
    before = BiLM.from_files(run / "options.json", run / "weights.hdf5", state="stateless")
    after = BiLM.from_files(
        tmp_path / "continued" / "options.json", tmp_path / "continued" / "weights.hdf5"
    )
    for (name, a), b in zip(before.state_dict().items(), after.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def continued(tiny_config, base: Path, out: Path, steps: int, *overrides: str) -> Path:
    """`out` after `steps` of a run continued from the trained run in `base`."""
    files = f"options: {base / 'options.json'}, weights: {base / 'weights.hdf5'}"
    pair = f"+pretrain.init_from={{{files}}}"
    settings = (f"pretrain.max_steps={steps}", "pretrain.eval_every=100", *overrides)
    train(tiny_config(pair, *settings, output_dir=out))
    return out


def same_bilm(run: Path, other: Path) -> bool:
    """Whether the biLMs exported in two runs have equal weights."""
    base = BiLM.from_files(run / "options.json", run / "weights.hdf5")
    again = BiLM.from_files(other / "options.json", other / "weights.hdf5")
    pairs = zip(base.state_dict().values(), again.state_dict().values(), strict=True)
    return all(torch.equal(a, b) for a, b in pairs)


def test_softmax_warmup_keeps_the_continued_bilm_frozen_until_its_end(
    tiny_config, tmp_path: Path
) -> None:
    _, run = trained(tiny_config, tmp_path)

    warm_up = "pretrain.softmax_warmup_steps=3"
    assert same_bilm(run, continued(tiny_config, run, tmp_path / "at3", 3, warm_up))  # softmax only
    later = continued(tiny_config, run, tmp_path / "at5", 5, warm_up)
    assert not same_bilm(run, later)  # then the biLM too
    rows = [json.loads(line) for line in (later / "heldout.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [3]  # the "before" evaluation (eval_every is 100)


def test_bilm_lr_scale_steps_the_biLM_at_a_fraction_of_the_softmaxs_rate(
    tiny_config, tmp_path: Path
) -> None:
    _, run = trained(tiny_config, tmp_path)
    frozen = continued(tiny_config, run, tmp_path / "scale0", 4, "pretrain.bilm_lr_scale=0")
    assert same_bilm(run, frozen)  # at scale 0 only the softmax learns, with no warm-up
    slower = continued(tiny_config, run, tmp_path / "scale0.5", 4, "pretrain.bilm_lr_scale=0.5")
    full = continued(tiny_config, run, tmp_path / "scale1", 4)
    assert not same_bilm(run, slower) and not same_bilm(slower, full)
