#!/usr/bin/env bash
# Start (or continue) a learning-curve runner in the background at a low CPU priority (nice 10),
# so that it can run for hours beside interactive work and resume in a later session.
#   bash experiments/study/learning_curve.sh NAME [learning_curve.py run options]
#   e.g. bash experiments/study/learning_curve.sh conll2003 --new-bilm ~/bilm-run --jobs 2
# NAME labels the runner: its log is $LOGS/NAME.log and its pid $LOGS/NAME.pid (LOGS defaults
# to outputs/learning_curve). Finished runs are skipped and a killed one resumes from its
# checkpoint, so rerunning the same command continues. PYTHON: the interpreter with the
# dependencies (default .venv/bin/python); the code is the checkout this script is run from.
# Stop: kill "$(cat "$LOGS/NAME.pid")" (its running jobs stop too and resume next time).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -lt 1 ]]; then
  echo "usage: bash experiments/study/learning_curve.sh NAME [learning_curve.py run options]" >&2
  exit 2
fi
name=$1
shift
LOGS=${LOGS:-outputs/learning_curve}
PYTHON=${PYTHON:-.venv/bin/python}
mkdir -p "$LOGS"
pid_file=$LOGS/$name.pid
if [[ -f $pid_file ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  echo "the learning-curve runner '$name' is already running (pid $(cat "$pid_file"))" >&2
  exit 1
fi
nohup nice -n 10 "$PYTHON" experiments/study/learning_curve.py run "$@" >> "$LOGS/$name.log" 2>&1 &
echo $! > "$pid_file"
echo "learning-curve runner '$name' started (pid $!); log: $LOGS/$name.log"
