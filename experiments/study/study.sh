#!/usr/bin/env bash
# Start (or continue) the CoNLL study in the background; each finished run's summary is written to
# experiments/results/study/ (commit it yourself).
#   bash experiments/study/study.sh [study.py run options, e.g. --jobs 1 --max-minutes 300]
# Progress: .venv/bin/python experiments/study/study.py status; log: outputs/study/study.log.
# Stop: kill "$(cat outputs/study/runner.pid)" (running jobs stop too and resume next time).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p outputs/study
pid_file=outputs/study/runner.pid
if [[ -f $pid_file ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  echo "the study runner is already running (pid $(cat "$pid_file"))" >&2
  exit 1
fi
nohup .venv/bin/python experiments/study/study.py run "$@" >> outputs/study/study.log 2>&1 &
echo $! > "$pid_file"
echo "study runner started (pid $!); log: outputs/study/study.log"
