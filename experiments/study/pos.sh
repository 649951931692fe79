#!/usr/bin/env bash
# The part-of-speech study: experiment=ptb_pos_glove and experiment=ptb_pos_elmo_glove on the
# Penn Treebank WSJ sample, seeds 1-3, one run at a time on one thread. Seed by seed (GloVe, then
# ELMo ⊕ GloVe), so that a stopped study still holds whole comparisons. Resumable: a finished run
# is skipped, a killed one continues from its last checkpoint. VARIANTS="glove" (or "elmo_glove")
# runs one variant only, e.g. to run the two variants side by side as two runners, one thread
# each. VARIANTS="elmo_glove_task" runs experiment=ptb_pos_elmo_glove with the biLM adapted to the
# training text first (elmo.adapt=task; every seed shares the one cached adaptation), and
# "elmo_glove_task_lr<S>" the same with elmo.adapt_lr_scale=S.
#   mkdir -p outputs/pos && nohup bash experiments/study/pos.sh > outputs/pos/pos.log 2>&1 &
# Runs go to outputs/pos/ptb_sample/<variant>/seed<S>/; each finished run's results.json (paths
# made relative, the biLM's sha256 recorded: publish_run.py) and predictions_test.txt (for the
# paired test) are copied to
# experiments/results/pos/runs/ptb_sample/<variant>/seed<S>/, and ner-report then writes the
# tables (mean ± std, significance, mix weights) into experiments/results/pos/report/.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=outputs/pos
RESULTS=experiments/results/pos
SEEDS=${SEEDS:-"1 2 3"}
VARIANTS=${VARIANTS:-"glove elmo_glove"}
mkdir -p "$OUT"
for seed in $SEEDS; do
  for variant in $VARIANTS; do
    run=$OUT/ptb_sample/$variant/seed$seed
    kept=$RESULTS/runs/ptb_sample/$variant/seed$seed
    if [[ ! -f $run/results.json ]]; then
      if [[ -f $run/checkpoints/last.pt ]]; then
        args=("resume=$run")
      elif [[ $variant == elmo_glove_task* ]]; then
        args=("experiment=ptb_pos_elmo_glove" "elmo.adapt=task" "seed=$seed" "hydra.run.dir=$run")
        [[ $variant == *_lr* ]] && args+=("elmo.adapt_lr_scale=${variant##*_lr}")
      else
        args=("experiment=ptb_pos_$variant" "seed=$seed" "hydra.run.dir=$run")
      fi
      echo "$(date '+%F %T') start $run"
      OMP_NUM_THREADS=1 .venv/bin/python -m ner.cli.train "${args[@]}" logger=none progress=false \
        trainer.num_threads=1 embeddings.glove.tuning=fine_tune
      echo "$(date '+%F %T') done $run"
    fi
    .venv/bin/python experiments/study/publish_run.py "$run" "$kept"
  done
done
.venv/bin/python -m ner.cli.report "$RESULTS/runs" --out "$RESULTS/report"
