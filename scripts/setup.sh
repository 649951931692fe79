#!/usr/bin/env bash
# Create .venv and install the toolkit with its dev extras. Idempotent: a second run is quick.
# Without an NVIDIA GPU it installs the CPU build of torch (a few hundred MB) instead of the
# multi-GB CUDA build that a bare `pip install torch` would pull on Linux.
# Each step says what it does and how long it took; the console scripts end up in .venv/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
STARTED=$SECONDS

# step DESCRIPTION COMMAND...: print what runs, run it, print how long it took.
step() {
  local description=$1 began=$SECONDS
  shift
  echo "setup: ${description} ..."
  "$@"
  echo "setup: ${description}: done in $((SECONDS - began)) s"
}

install_torch() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    "${PIP[@]}" "torch>=2.4"
  else
    # The CPU wheel index; pip falls back to PyPI (or a local wheel cache) when it is unreachable.
    "${PIP[@]}" --retries 0 --timeout 15 "torch==2.13.0" \
      --extra-index-url https://download.pytorch.org/whl/cpu
  fi
}

if [ -x .venv/bin/python ]; then
  echo "setup: .venv exists, reusing it"
else
  step "creating .venv with $PYTHON" "$PYTHON" -m venv .venv
fi
if .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "setup: torch is installed, skipping it"
else
  step "installing torch (the largest download, usually 1-3 minutes)" install_torch
fi
step "installing ner-elmo and its dependencies (editable, with the dev extras)" \
  "${PIP[@]}" -e ".[dev]"
echo "setup: ready in $((SECONDS - STARTED)) s. Run the tools as .venv/bin/ner-train etc.," \
  "or activate the environment first: source .venv/bin/activate"
