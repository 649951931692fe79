"""Faults during training, in-process: a NaN loss or gradient stops the run with the last good
checkpoint kept; SIGINT/SIGTERM saves a checkpoint mid-epoch and the resumed run ends exactly
where the uninterrupted one does."""

import os
import signal

import pytest
import torch

from ner.common.checkpoints import load_checkpoint
from ner.tagger.dataset import Split, Vocabularies, collate, tag_list
from ner.tagger.model import TaggerModel
from ner.training.evaluation import evaluate_split
from ner.training.interrupt import TrainingInterrupted
from ner.training.loop import Trainer, TrainingDiverged

TOKENS = [["John", "lives", "in", "Paris"], ["Mary", "left"], ["Rome", "is", "big"]] * 4
TAGS = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O"], ["B-LOC", "O", "O"]] * 4
MODEL_TAGS = tag_list({"PER", "LOC"}, "iob2")


def make_trainer(run_dir, epochs: int = 3):
    """A small word-level tagger (dropout on, so the RNG stream matters) and its data."""
    torch.manual_seed(0)
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    model = TaggerModel(
        tags=MODEL_TAGS,
        tag_scheme="iob2",
        num_words=len(vocabularies.words),
        word_dim=8,
        hidden_size=8,
        dropout=0.5,
    )
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]
    split = Split("validation", TOKENS, TAGS)

    def evaluate(m):
        return evaluate_split(
            m, split, examples, collate, corpus_scheme="iob2", model_scheme="iob2",
            batch_size=8, device=torch.device("cpu"),
        )  # fmt: skip

    trainer = Trainer(
        optimizer=lambda parameters: torch.optim.Adam(parameters, lr=0.05),
        run_dir=run_dir,
        max_epochs=epochs,
        patience=None,
        grad_norm=None,
        max_batch_tokens=None,
        batch_size=4,
        device="cpu",
        num_threads=1,
        progress=False,
    )
    trainer.setup(model)
    return trainer, examples, evaluate


class OnCall:
    """`collate` that runs `action` once, just before building its `at`-th batch."""

    def __init__(self, at: int, action) -> None:
        self.at, self.action, self.calls = at, action, 0

    def __call__(self, batch):
        self.calls += 1
        if self.calls == self.at:
            self.action()
        return collate(batch)


def test_a_nan_loss_stops_training_and_keeps_the_last_good_checkpoint(tmp_path):
    trainer, examples, evaluate = make_trainer(tmp_path)
    poison = OnCall(5, lambda: trainer.model.word_embedding.weight.data.fill_(float("nan")))
    with pytest.raises(TrainingDiverged, match=r"loss became NaN or inf in epoch 2, batch 2"):
        trainer.fit(examples, poison, evaluate)  # 3 batches per epoch: call 5 = epoch 2, batch 2
    saved = load_checkpoint(tmp_path / "checkpoints" / "last.pt")
    assert saved["loop"]["epoch"] == 1
    assert all(torch.isfinite(v).all() for v in saved["model"].values())


def test_an_infinite_gradient_stops_training_before_the_update(tmp_path):
    trainer, examples, evaluate = make_trainer(tmp_path)
    weight = trainer.model.word_embedding.weight
    hook = OnCall(2, lambda: weight.register_hook(lambda grad: grad * float("inf")))
    with pytest.raises(TrainingDiverged, match=r"gradient became NaN or inf in epoch 1, batch 2"):
        trainer.fit(examples, hook, evaluate)
    assert torch.isfinite(weight).all()  # the optimizer never stepped on it
    assert not (tmp_path / "checkpoints" / "last.pt").exists()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run."""
    trainer, examples, evaluate = make_trainer(tmp_path_factory.mktemp("reference"))
    trainer.fit(examples, collate, evaluate)
    return trainer


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_saves_mid_epoch_and_the_resumed_run_is_identical(
    tmp_path, signal_number, reference
):
    interrupted, examples, evaluate = make_trainer(tmp_path / "run")
    handler = signal.getsignal(signal_number)
    stop = OnCall(5, lambda: os.kill(os.getpid(), signal_number))
    with pytest.raises(TrainingInterrupted) as caught:
        interrupted.fit(examples, stop, evaluate)
    message = str(caught.value)
    assert f"resume with ner-train resume={tmp_path / 'run'}" in message
    assert caught.value.exit_code == 128 + signal_number
    assert signal.getsignal(signal_number) == handler  # put back after training
    saved = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.pt")
    assert (saved["loop"]["epoch"], saved["loop"]["epoch_batches"]) == (1, 2)

    resumed, examples, evaluate = make_trainer(tmp_path / "run")
    resumed.resume()
    state = resumed.fit(examples, collate, evaluate)
    assert state.epoch == 3
    assert [h["dev/f1"] for h in state.history] == [h["dev/f1"] for h in reference.state.history]
    for name, value in reference.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], value), name
