"""The training loop in-process: early stopping, LR schedules, checkpoints, resume state."""

import pytest
import torch

from ner.common.checkpoints import load_checkpoint, save_checkpoint
from ner.tagger.dataset import Split, Vocabularies, collate, tag_list
from ner.tagger.model import TaggerModel
from ner.training.evaluation import evaluate_split
from ner.training.loop import Trainer

TOKENS = [["John", "lives", "in", "Paris"], ["Mary", "left"], ["Rome", "is", "big"]] * 4
TAGS = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O"], ["B-LOC", "O", "O"]] * 4
MODEL_TAGS = tag_list({"PER", "LOC"}, "iob2")


def make_trainer(
    tmp_path,
    lr: float,
    patience: int | None,
    scheduler=None,
    epochs: int = 6,
    eval_every: int = 1,
):
    torch.manual_seed(0)
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    model = TaggerModel(
        tags=MODEL_TAGS,
        tag_scheme="iob2",
        num_words=len(vocabularies.words),
        word_dim=8,
        hidden_size=8,
    )
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]
    split = Split("validation", TOKENS, TAGS)

    def evaluate(m):
        return evaluate_split(
            m,
            split,
            examples,
            collate,
            corpus_scheme="iob2",
            model_scheme="iob2",
            batch_size=8,
            device=torch.device("cpu"),
        )

    trainer = Trainer(
        optimizer=lambda parameters: torch.optim.Adam(parameters, lr=lr),
        scheduler=scheduler,
        run_dir=tmp_path,
        max_epochs=epochs,
        patience=patience,
        eval_every=eval_every,
        grad_norm=5.0,
        batch_size=4,
        device="cpu",
        num_threads=1,
        progress=False,
    )
    trainer.setup(model, extra_state={"model_config": model.config})
    return trainer, examples, evaluate


def test_early_stopping_when_dev_f1_stalls(tmp_path):
    trainer, examples, evaluate = make_trainer(tmp_path, lr=0.0, patience=2)
    state = trainer.fit(examples, collate, evaluate)
    # lr 0: the model never changes, so epoch 1 stays the best and epochs 2-3 use up the patience.
    assert (state.epoch, state.best_epoch, state.stopped_early) == (3, 1, True)
    assert load_checkpoint(tmp_path / "checkpoints" / "best.pt")["loop"]["epoch"] == 1
    assert load_checkpoint(tmp_path / "checkpoints" / "last.pt")["loop"]["epoch"] == 3


def test_eval_every_scores_dev_every_nth_and_the_last_epoch(tmp_path):
    trainer, examples, evaluate = make_trainer(tmp_path, lr=0.05, patience=None, epochs=7)
    trainer.eval_every = 3
    scored = []
    state = trainer.fit(examples, collate, lambda m: scored.append(1) or evaluate(m))
    assert len(scored) == 3  # after epochs 3, 6 and the last, 7
    assert [h["epoch"] for h in state.history if "dev/f1" in h] == [3, 6, 7]
    assert state.best_epoch in (3, 6, 7) and state.epoch == 7


def test_patience_counts_epochs_when_dev_is_scored_every_few(tmp_path):
    trainer, examples, evaluate = make_trainer(
        tmp_path, lr=0.0, patience=4, epochs=20, eval_every=2
    )
    state = trainer.fit(examples, collate, evaluate)
    # lr 0: epoch 2 (the first scored) stays the best; at epoch 6 four epochs have passed.
    assert (state.epoch, state.best_epoch, state.stopped_early) == (6, 2, True)
    assert load_checkpoint(tmp_path / "checkpoints" / "best.pt")["loop"]["epoch"] == 2


def test_lr_schedule_steps_each_epoch_and_the_loss_falls(tmp_path):
    trainer, examples, evaluate = make_trainer(
        tmp_path,
        lr=0.05,
        patience=None,
        scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5),
        epochs=4,
    )
    state = trainer.fit(examples, collate, evaluate)
    # Each epoch logs the rate it trained with (read before the scheduler steps).
    assert [h["lr"] for h in state.history] == pytest.approx([0.05, 0.025, 0.0125, 0.00625])
    losses = [h["train/loss_per_token"] for h in state.history]
    assert losses[-1] < losses[0]


def test_resume_restores_model_optimizer_and_loop(tmp_path):
    trainer, examples, evaluate = make_trainer(tmp_path, lr=0.05, patience=None, epochs=2)
    trainer.fit(examples, collate, evaluate)
    again, _, _ = make_trainer(tmp_path, lr=0.05, patience=None, epochs=2)
    again.resume()
    assert again.state.epoch == 2 and again.state.history == trainer.state.history
    for name, value in trainer.model.state_dict().items():
        assert torch.equal(value, again.model.state_dict()[name])
    assert (
        again.optimizer.state_dict()["state"].keys()
        == trainer.optimizer.state_dict()["state"].keys()
    )


def test_checkpoints_are_replaced_atomically_and_bad_ones_are_named(tmp_path):
    path = tmp_path / "c.pt"
    save_checkpoint(path, {"x": torch.ones(2)})
    save_checkpoint(path, {"x": torch.zeros(2)})
    assert torch.equal(load_checkpoint(path)["x"], torch.zeros(2))
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"c\.pt is not a readable checkpoint"):
        load_checkpoint(path)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_logged_loss_is_the_crf_loss_without_the_mix_penalty(tmp_path):
    torch.manual_seed(0)
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    model = TaggerModel(
        tags=MODEL_TAGS, tag_scheme="iob2", elmo_dim=4, hidden_size=8, dropout=0.0, lstm_dropout=0.0
    )
    with torch.no_grad():
        model.elmo_mix.scalar_parameters.fill_(1.0)  # a penalty of 3 × mix_l2 per batch
    layers = torch.randn(len(TOKENS), 3, 4, 4)  # (N, L, T, D)
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]

    def make_batch(batch):
        length = max(len(e.words) for e in batch)
        return collate(batch, elmo=lambda indices: layers[indices][:, :, :length])

    trainer = Trainer(
        optimizer=lambda parameters: torch.optim.SGD(parameters, lr=0.0),
        run_dir=tmp_path,
        max_epochs=1,
        mix_l2=10.0,
        batch_size=4,
        device="cpu",
        num_threads=1,
        progress=False,
    )
    trainer.setup(model)
    state = trainer.fit(examples, make_batch, lambda m: {"f1": 0.0, "precision": 0, "recall": 0})
    with torch.no_grad():
        crf_loss = sum(float(model(make_batch([e]))["loss"]) for e in examples)
    logged = state.history[0]["train/loss_per_token"] * sum(len(e.words) for e in examples)
    assert logged == pytest.approx(crf_loss, rel=1e-5)


def test_the_model_regularization_gives_the_step_the_loop_gave(tmp_path):
    """The loop once added the mix penalty itself and the model's anchor penalty after it; with
    the model's `regularization` a batch gives the same loss and, bit for bit, the same
    gradients."""
    torch.manual_seed(0)
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    model = TaggerModel(
        tags=MODEL_TAGS,
        tag_scheme="iob2",
        num_words=len(vocabularies.words),
        word_dim=8,
        word_tuning="anchored",
        elmo_dim=4,
        hidden_size=8,
        dropout=0.0,
        lstm_dropout=0.0,
    )
    found = torch.arange(len(vocabularies.words)) % 2 == 0
    model.set_pretrained_rows(torch.randn(len(vocabularies.words), 8), found)
    with torch.no_grad():
        model.elmo_mix.scalar_parameters.copy_(torch.tensor([0.5, -1.0, 2.0]))
        model.word_embedding.weight.add_(0.1)  # the rows have moved from their anchor
    layers = torch.randn(len(TOKENS), 3, 4, 4)  # (N, L, T, D)
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]
    batch = collate(examples, elmo=lambda indices: layers[indices])

    loss = model(batch)["loss"]  # the loop's old sum, written out
    objective = loss + 10.0 * model.elmo_mix.scalar_parameters.pow(2).sum()
    objective = objective + 0.5 * model.anchor_penalty()
    objective.backward()
    before = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    model.zero_grad(set_to_none=True)
    trainer = Trainer(
        optimizer=lambda parameters: torch.optim.SGD(parameters, lr=0.0),
        run_dir=tmp_path,
        max_epochs=1,
        batch_size=len(examples),
        mix_l2=10.0,
        anchor_weight=0.5,
        device="cpu",
        num_threads=1,
        progress=False,
    )
    trainer.setup(model)
    assert trainer._accumulate_gradients(batch, 1) == float(loss.detach())
    after = [p.grad for p in model.parameters() if p.grad is not None]
    assert len(after) == len(before) and all(
        torch.equal(a, b) for a, b in zip(after, before, strict=True)
    )
    penalty = model.regularization(mix_l2=10.0, anchor_weight=0.5)
    assert float(penalty.detach()) == pytest.approx(float((objective - loss).detach()), rel=1e-6)
    assert model.regularization() is None  # no weight: nothing to add


def one_step(
    tmp_path, max_batch_tokens: int | None, layer_norm: bool = False
) -> tuple[list[torch.Tensor], ...]:
    """The parameters before and after one optimizer step on one batch of all sentences (words,
    chars and ELMo layers with a mix penalty), with dropout 0 and no unknown-word replacement,
    so that only the chunking can change the step; and the logged loss per token."""
    torch.manual_seed(0)
    layers = torch.randn(len(TOKENS), 3, 4, 4)  # (N, L, T, D)
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    model = TaggerModel(
        tags=MODEL_TAGS,
        tag_scheme="iob2",
        num_words=len(vocabularies.words),
        num_chars=len(vocabularies.chars),
        word_dim=8,
        elmo_dim=4,
        elmo_layer_norm=layer_norm,
        hidden_size=8,
        dropout=0.0,
        lstm_dropout=0.0,
    )
    before = [p.detach().clone() for p in model.parameters()]
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]
    trainer = Trainer(
        optimizer=lambda parameters: torch.optim.SGD(parameters, lr=0.1),
        run_dir=tmp_path,
        max_epochs=1,
        batch_size=len(examples),
        grad_norm=1.0,  # clipping must see the whole batch's gradient, not a chunk's
        max_batch_tokens=max_batch_tokens,
        mix_l2=10.0,  # added once per batch, not once per chunk
        device="cpu",
        num_threads=1,
        progress=False,
    )
    trainer.setup(model)

    def make_batch(batch):
        length = max(len(e.words) for e in batch)
        return collate(batch, elmo=lambda indices: layers[indices][:, :, :length])

    state = trainer.fit(examples, make_batch, lambda m: {"f1": 0.0, "precision": 0, "recall": 0})
    after = [p.detach().clone() for p in model.parameters()]
    return before, after, [state.history[0]["train/loss_per_token"]]


@pytest.mark.parametrize("layer_norm", [False, True])
def test_a_step_in_row_chunks_gives_the_whole_batch_update(tmp_path, layer_norm):
    start, whole, whole_loss = one_step(tmp_path / "whole", None, layer_norm)
    # 48 padded positions → 5 chunks
    _, chunked, chunked_loss = one_step(tmp_path / "chunked", 10, layer_norm)
    assert not all(torch.equal(a, b) for a, b in zip(start, whole, strict=True))
    for expected, actual in zip(whole, chunked, strict=True):
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)
    assert chunked_loss == pytest.approx(whole_loss, rel=1e-6)


def test_row_chunks_respect_the_limit_and_keep_every_sentence():
    vocabularies = Vocabularies.build(TOKENS, MODEL_TAGS)
    examples = [
        vocabularies.encode(i, t, g) for i, (t, g) in enumerate(zip(TOKENS, TAGS, strict=True))
    ]
    batch = collate(examples)  # 12 sentences of 4, 2 and 3 tokens, padded to 4
    whole = batch.split(48)
    assert len(whole) == 1 and whole[0] is batch
    chunks = batch.split(9)
    # Longest first: 2 × 4 twice, 3 × 3, then the last 3-token sentence with two of 2 tokens
    # (3 × 3), then the last two (2 × 2).
    assert [tuple(c.mask.shape) for c in chunks] == [(2, 4), (2, 4), (3, 3), (3, 3), (2, 2)]
    assert all(c.mask.numel() <= 9 and bool(c.mask[:, -1].any()) for c in chunks)
    assert sum(c.num_tokens for c in chunks) == batch.num_tokens
    assert sorted(
        tuple(c.words[r][c.mask[r]].tolist()) for c in chunks for r in range(len(c.mask))
    ) == sorted(tuple(batch.words[r][batch.mask[r]].tolist()) for r in range(len(batch.mask)))
    # Sentences over the limit get a chunk each, cut to their own length.
    one_each = [(1, 4)] * 4 + [(1, 3)] * 4 + [(1, 2)] * 4
    assert [tuple(c.mask.shape) for c in batch.split(1)] == one_each
