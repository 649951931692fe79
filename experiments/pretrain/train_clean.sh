#!/usr/bin/env bash
# Train the shipped biLM, elmo-small-news: its shape from scratch on the clean corpus (named
# sources without any dev/test sentence of the corpora we evaluate on) with the recipe that is
# conf/pretrain.yaml's default, in the background at the lowest CPU priority. Rerunning the same
# command resumes from the last checkpoint (written every 10 minutes), so the run can span several
# sessions.
#
#   bash experiments/pretrain/train_clean.sh pretrain.precision=float32
#                                                       # start or resume (as the shipped run,
#                                                       # whose products were float32); returns
#                                                       # at once
#   bash experiments/pretrain/train_clean.sh model.lstm.dim=1024 pretrain.precision=bfloat16
#                                                       # another shape (same overrides to resume)
#   tail -f "$RUN/train.log"                            # progress; heldout.jsonl: perplexity curve
#
# RUN (default ~/bilm-run) holds checkpoint.pt, log.jsonl, heldout.jsonl and, at the end, the
# exported options.json + weights.hdf5 + vocab.txt + metrics.json. Its data/ folder is the data
# cache of this run (NER_DATA_DIR), so it does not depend on a checkout's data/. PYTHON is the
# interpreter with the dependencies (default .venv/bin/python of this checkout); the code is the
# checkout this script is run from (run it from a `git worktree` to keep the code fixed while
# the working tree changes). Mirrors: NER_NLTK_DATA_URL, NER_REUTERS_URL (as for any named source).
#
# The recipe (the defaults; MODEL_CARD.md states the same, a test checks it): 16,000 steps × 64
# streams × 20 steps = 20.5M positions per direction, about 2.4 passes over the 8.4M positions
# (tokens plus sentence boundaries) of the corpus; Adam 0.002 with 500 warm-up steps and a linear
# decay to 0 at the last step (the decay follows max_steps as it is at each resume, so a run may be
# shortened or lengthened on the way); every stream restarts from a zero state with probability
# 0.1 per batch (the biLM must work from the zero state inference starts from); held-out
# perplexity every 500 steps (about a minute each). Here only how the run is kept: one thread (the
# same losses on every rerun), checkpoints every 10 minutes, a log line every 50 steps.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=${RUN:-$HOME/bilm-run}
PYTHON=${PYTHON:-.venv/bin/python}
export NER_DATA_DIR=${NER_DATA_DIR:-$RUN/data}
mkdir -p "$RUN"
nohup nice -n 19 "$PYTHON" -m ner.cli.pretrain \
    pretrain.output_dir="$RUN" pretrain.threads=1 \
    pretrain.checkpoint_minutes=10 pretrain.log_every=50 "$@" \
    >> "$RUN/train.log" 2>&1 &
echo "pretraining in the background (pid $!); log: $RUN/train.log"
