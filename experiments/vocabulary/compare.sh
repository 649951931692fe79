#!/usr/bin/env bash
# Vocabulary before/after on CoNLL-2003, GloVe ⊕ char-CNN, one seed, a short budget (the first
# 3,000 sentences of each split, 3 epochs, 1 thread), side by side:
#   before: the code before the vocabulary change (commit 102d17a: train+dev+test vocabulary,
#           unknown word never trained), extracted into BEFORE_TREE;
#   after:  this checkout (train vocabulary, GloVe kept for other words, singleton replacement).
# Then test F1 overall and on test sentences with many words unseen in train.
#
#   git archive 102d17a | tar -x -C /tmp/before
#   BEFORE_TREE=/tmp/before OUT=outputs/vocabulary bash experiments/vocabulary/compare.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(realpath -m "${OUT:-$ROOT/outputs/vocabulary}")
export NER_DATA_DIR="${NER_DATA_DIR:-$ROOT/data}"
budget=(experiment=conll2003_glove logger=none progress=false seed=1 trainer.max_epochs=3
        trainer.num_threads=1 data.max_sentences=3000)
(cd "$BEFORE_TREE" && nice -n 19 "$ROOT/.venv/bin/python" -m ner.cli.train "${budget[@]}" \
    hydra.run.dir="$OUT/before")
(cd "$ROOT" && nice -n 19 .venv/bin/python -m ner.cli.train "${budget[@]}" \
    hydra.run.dir="$OUT/after")
cd "$ROOT"
.venv/bin/python experiments/vocabulary/unseen_words.py "$OUT/before" "$OUT/after" \
    --max-sentences 3000 --out experiments/results/vocabulary/conll2003_3000x3.json
