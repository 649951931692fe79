# ruff: noqa: E501  (the card is a Markdown template with long table rows)
"""Package a finished pretraining run: copy its biLM into OUT_DIR and write MODEL_CARD.md there.

    .venv/bin/python experiments/pretrain/model_card.py RUN_DIR OUT_DIR [--name NAME]
        [--note FILE]   # e.g. experiments/pretrain/train_clean_history.md for the clean run

OUT_DIR is never inside the installed package's ``ner/pretrained/``: the shipped taggers pin the
digests of the biLM there, so replacing it would break them. Shipping a new biLM is a release
step taken by hand (copy the folder, retrain and re-export the taggers that read it).

Every figure in the card is read from the run (metrics.json, checkpoint.pt config, log.jsonl).
What the biLM adds to a tagger is not in the run: that section ("On a tagger") is written into
the card by hand from the learning curve (experiments/study/learning_curve.py) once it has run.
"""

import argparse
import json
import shutil
from pathlib import Path

from ner.bilm.options import BiLMOptions
from ner.bilm.weights import count_parameters
from ner.common.checkpoints import load_checkpoint
from ner.pretrain import PRETRAINED_DIR, SHIPPED_MODEL

# How the next shipped biLM is trained (rerunning it resumes from the run's checkpoint).
COMMAND = "PYTHON=.venv/bin/python RUN=<run folder> bash experiments/pretrain/train_clean.sh"


def optimizer_name(optimizer: dict) -> str:
    """The optimizer as the card names it: adam, adagrad, ... (from its ``_target_``, or from the
    ``name`` that configs before ``_target_`` gave)."""
    return optimizer.get("name") or optimizer["_target_"].rsplit(".", 1)[-1].lower()


def card(name: str, run: Path, metrics: dict, config: dict, log: list[dict], note: str = "") -> str:
    """The card's Markdown; `note`: what the run's files do not record (e.g. a schedule changed
    at a resume), a paragraph placed after the command."""
    options = BiLMOptions.from_file(run / "options.json")
    settings = config["pretrain"]
    ppl = metrics["perplexity"]
    rows = "\n".join(
        f"| `{source}` | {counts['train']:,} | {counts['heldout']:,} |"
        for source, counts in metrics["sources"].items()
    )
    rates = [r["tokens_per_s"] for r in log]
    # of its products; runs from before the setting trained in float32. The default (auto)
    # depends on the machine, so the card's command pins it.
    precision = metrics.get("precision", "float32")
    hours = metrics["train_seconds"] / 3600
    return f"""# {name}

A small ELMo biLM (char-CNN + highway + 2-layer biLSTM with projections, the AllenNLP/bilm-tf
architecture and file format) trained from scratch with `ner-pretrain` on English newswire
(Reuters 1987, WSJ, CoNLL-2003 train) and general text (Brown, ABC, speeches, web text, reviews). It is the biLM this package ships, so ELMo works with no download:
`ner.pretrain.pretrained_files()`, the Hydra preset `elmo=small_news`, or these two files anywhere an
AllenNLP `options.json` + `weights.hdf5` pair is accepted.

| | |
|---|---|
| layers returned | 3 (token layer, LSTM 1, LSTM 2), each {options.output_dim}-d (2 × {options.projection_dim}) |
| LSTM | {options.n_layers} layers per direction, cell {options.lstm_dim}, projection {options.projection_dim}, clips {options.cell_clip}/{options.proj_clip}, skip connections |
| char-CNN | {options.char_embedding_dim}-d chars, filters {[list(f) for f in options.filters]} ({options.num_filters} total), {options.n_highway} highway, {options.activation} |
| parameters | {count_parameters(options):,} in weights.hdf5 (the {metrics["vocab_size"]:,} × {options.projection_dim} softmax is not exported) |
| files | `options.json`, `weights.hdf5` ({(run / "weights.hdf5").stat().st_size / 2**20:.1f} MB), `vocab.txt` (softmax vocabulary, bilm-tf format) |

## Held-out perplexity

| direction | perplexity |
|---|---|
| forward | **{ppl["forward"]:.1f}** |
| backward | **{ppl["backward"]:.1f}** |

Full softmax over the {metrics["vocab_size"]:,}-word vocabulary (`<UNK>` is a target like any word),
on {ppl["heldout_positions"]:,} positions of the held-out sentences ({metrics["heldout_sentences"]:,}
sentences, {metrics["heldout_tokens"]:,} tokens: those whose CRC-32 % 1000 < {config["corpus"]["heldout_per_mille"]}), read as
{settings["eval_batch_size"]} streams of {settings["eval_unroll_steps"]}-step windows with the
state carried. Not comparable with the published ELMo perplexities (1B Word Benchmark, 793k
vocabulary, ~40): other data and vocabulary, and a model {93_600_848 / count_parameters(options):.0f}× smaller than the original ELMo.

## Data

{metrics["train_tokens"]:,} training tokens in {metrics["train_sentences"]:,} sentences; {metrics["types"]:,}
distinct tokens, of which the {metrics["vocab_size"]:,} most frequent (count ≥ {config["vocab"]["min_count"]},
`<S>`, `</S>`, `<UNK>` first) are the softmax vocabulary. Raw text was sentence-split and tokenized
like CoNLL-2003 (`ner.data.tokenize`); tokenized corpora were read as tokens.

| source | train tokens | held-out tokens |
|---|---|---|
{rows}

`reuters`: Reuters-21578 article bodies (UCI KDD archive); `brown`, `abc`, `treebank` (raw WSJ
sample), `state_union`, `webtext`, `movie_reviews`, `inaugural`: nltk_data corpora;
`conll2000_train`, `conll2003_train`: the tokens of those corpora's training splits only. No
sentence of this text equals a dev or test sentence of CoNLL-2003, CoNLL-2000 or CoNLL-2002 (those
are left out when a source is prepared), so tagger results on those splits are scored on text this
biLM never saw. Reuters-21578 is free for research use; check the terms of each corpus before
commercial use of this model.

## Training

| | |
|---|---|
| steps | {metrics["steps"]:,} × batch {settings["batch_size"]} streams × {settings["unroll_steps"]} steps |
| tokens seen | {metrics["tokens_seen"]:,} positions per direction ({metrics["epochs"]:.2f} epochs) |
| loss | sampled softmax, {settings["n_negative_samples"]} log-uniform negatives per batch; final training loss {log[-1]["loss"]:.2f} |
| optimizer | {optimizer_name(settings["optimizer"])} lr {settings["optimizer"]["lr"]}, {settings["warmup_steps"]} warm-up steps, {settings["lr_schedule"]} schedule, grad-norm clip {settings["clip_norm"]}, dropout {settings["dropout"]}, seed {settings["seed"]} |
| state | carried through every stream (bilm-tf), except that each stream restarts from a zero state with probability {settings["state_reset_probability"]} per batch, so the model also works from the zero state inference starts from |
| precision | {precision} products (`pretrain.precision={precision}`) |
| time | {hours:.2f} h of training on {settings["threads"]} CPU thread(s) (a 2-core machine shared with other jobs; {min(rates):.0f}–{max(rates):.0f} positions/s) |
| curve | held-out perplexity every {settings["eval_every"]} steps: `experiments/results/bilm_perplexity.csv` (and `.png`) |

Exact command (from the repository root of a `git worktree` of the commit that trained it):

```bash
{COMMAND} pretrain.precision={precision}
```

{note}Training on CPU with one thread is deterministic: the same command repeats the same losses (and
rerunning it once finished re-evaluates the perplexities above from the run's `checkpoint.pt`).
Then `.venv/bin/python experiments/pretrain/model_card.py <run folder> <out folder>` writes this
folder.
"""


def inside_package(target: Path) -> bool:
    """Whether `target` is inside the installed package's pretrained models (see the module
    docstring: the script never writes there).

    # Parameters
    target: the folder the card and the biLM's files would be written to.
    """
    return target.resolve().is_relative_to(PRETRAINED_DIR.resolve())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("run", type=Path, help="the finished ner-pretrain run folder")
    parser.add_argument("target", type=Path, help="the folder to write (not in ner/pretrained/)")
    parser.add_argument("--name", default=SHIPPED_MODEL, help="the card's title")
    parser.add_argument("--note", type=Path, help="a Markdown paragraph about the run's history")
    args = parser.parse_args(argv)
    if inside_package(args.target):
        parser.error(
            f"{args.target} is inside the installed package ({PRETRAINED_DIR}), whose shipped "
            "taggers pin the biLM there; write the card to another folder"
        )
    metrics = json.loads((args.run / "metrics.json").read_text())
    config = load_checkpoint(args.run / "checkpoint.pt")["config"]
    log = [json.loads(line) for line in (args.run / "log.jsonl").read_text().splitlines()]
    target = args.target
    target.mkdir(parents=True, exist_ok=True)
    for file in ("options.json", "weights.hdf5", "vocab.txt"):
        shutil.copyfile(args.run / file, target / file)
    note = args.note.read_text(encoding="utf-8").strip() + "\n\n" if args.note else ""
    text = card(args.name, args.run, metrics, config, log, note)
    (target / "MODEL_CARD.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
