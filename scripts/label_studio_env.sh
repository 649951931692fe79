#!/usr/bin/env bash
# A scratch virtual environment holding Label Studio, for the tests marked `label_studio`
# (never a dependency of this package), and a data folder whose database is migrated already
# (`template/`: migrating a fresh one takes minutes). Created once, outside the repository, and
# reused; prints the environment's folder:
#   bash scripts/label_studio_env.sh
# NER_LABEL_STUDIO_VENV chooses the folder (default ~/.cache/ner-elmo/label-studio).
set -euo pipefail
VERSION=1.23.2
VENV="${NER_LABEL_STUDIO_VENV:-$HOME/.cache/ner-elmo/label-studio}"
# .version is written last: a folder without it (an install cut short) is made again.
if [ "$(cat "$VENV/.version" 2>/dev/null)" != "$VERSION" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "label-studio==$VERSION" >&2
    "$VENV/bin/label-studio" version --data-dir "$VENV/template" \
        --database "$VENV/template/label_studio.sqlite3" >/dev/null
    echo "$VERSION" > "$VENV/.version"
fi
echo "$VENV"
