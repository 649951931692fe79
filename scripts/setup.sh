#!/usr/bin/env bash
# Create .venv and install the toolkit with its dev extras. Idempotent: a second run is quick.
# Without an NVIDIA GPU it installs the CPU build of torch (a few hundred MB) instead of the
# multi-GB CUDA build that a bare `pip install torch` would pull on Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    "${PIP[@]}" "torch>=2.2"
  else
    # The CPU wheel index; pip falls back to PyPI (or a local wheel cache) when it is unreachable.
    "${PIP[@]}" --retries 0 --timeout 15 "torch==2.13.0" \
      --extra-index-url https://download.pytorch.org/whl/cpu
  fi
fi
"${PIP[@]}" -e ".[dev]"
