#!/usr/bin/env bash
# Train the shipped biLM ner/pretrained/elmo-small-news (1 CPU thread, about an hour here), then copy
# options.json + weights.hdf5 + vocab.txt + metrics.json into the package. Rerunning resumes from the
# last checkpoint; once finished, rerunning re-evaluates the held-out perplexity from the checkpoint.
# Mirrors (as in CI): NER_NLTK_DATA_URL=../shared/mirror/nltk_data
#                     NER_REUTERS_URL=../shared/mirror/reuters21578/reuters21578.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${RUN:-data/pretrain/runs/elmo-small-news}
.venv/bin/python -m ner.pretrain pretrain.output_dir="$RUN" pretrain.threads=1 pretrain.max_minutes=80
