#!/usr/bin/env bash
# Peak memory (maximum resident set size) of a CoNLL-2003 training run (EXPERIMENT, default the
# GloVe-only conll2003_glove) with a 1-epoch budget on 1 thread, as /usr/bin/time -v reports it.
# TREE: the checkout to measure (default: this one; e.g. `git archive <commit> | tar -x -C DIR`
# for an earlier version).
#
#   TREE=/tmp/old bash experiments/bench/train_memory.sh    # prints "Maximum resident set size"
#   EXPERIMENT=conll2003_elmo_glove bash experiments/bench/train_memory.sh   # the ELMo main job
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TREE=${TREE:-$ROOT}
export NER_DATA_DIR="${NER_DATA_DIR:-$ROOT/data}"
run_dir=$(mktemp -d)
cd "$TREE"
/usr/bin/time -v nice -n 19 "$ROOT/.venv/bin/python" -m ner.cli.train experiment="${EXPERIMENT:-conll2003_glove}" \
    logger=none progress=false seed=1 trainer.max_epochs=1 trainer.num_threads=1 \
    hydra.run.dir="$run_dir" 2>&1 | grep -E "Maximum resident|Elapsed|best epoch"
