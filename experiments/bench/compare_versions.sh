#!/usr/bin/env bash
# Side-by-side speed of two commits on the same machine state: prediction (bench/predict.py,
# 1 thread, first 1,000 CoNLL-2003 test sentences, shipped biLM) and one training epoch with and
# without the ELMo feature cache (bench/elmo_cache.py, small biLM shape, 1,000 sentences), each
# run at OLD and at the working tree, alternating. Commits from before the scripts moved into
# experiments/bench/ run them from their old place (experiments/bench_<name>.py).
#   bash experiments/bench/compare_versions.sh OLD_COMMIT OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$1 out=$(realpath -m "$2")
mkdir -p "$out"
tree=$(mktemp -d)
git worktree add -f "$tree" "$old" -q
trap 'git worktree remove --force "$tree"' EXIT
export NER_DATA_DIR=${NER_DATA_DIR:-$PWD/data}
python=$PWD/.venv/bin/python
bench() {  # bench ROOT NAME: the path of benchmark NAME in the tree at ROOT
  if [[ -f $1/experiments/bench/$2.py ]]; then echo "experiments/bench/$2.py"
  else echo "experiments/bench_$2.py"; fi
}
for round in 1 2; do
  for side in old new; do
    root=$PWD && [[ $side == old ]] && root=$tree
    (cd "$root" && PYTHONPATH=$root $python "$(bench "$root" predict)" \
      --bilm "$PWD/ner/pretrained/elmo-small-news" --threads 1 --sentences 1000 \
      --out "$out/predict_${side}_$round.json" > /dev/null)
    (cd "$root" && PYTHONPATH=$root $python "$(bench "$root" elmo_cache)" --shape small \
      --sentences 1000 --epochs 1 > "$out/epoch_${side}_$round.json")
  done
done
$python - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
def mean(name, key):
    values = []
    for round_ in (1, 2):
        data = json.loads((out / f"{name}_{round_}.json").read_text())
        values.append(key(data))
    return sum(values) / len(values)
rows = {
    "prediction, sentences/s (1 thread)": (
        "predict", lambda d: d["runs"][0]["pretokenized_sentences_per_second"]
    ),
    "training epoch with the ELMo cache, s": ("epoch", lambda d: d["cached"]["epoch_seconds"]),
    "training epoch running the biLM per batch, s": ("epoch", lambda d: d["live"]["epoch_seconds"]),
    "cache speed-up (live / cached epoch)": ("epoch", lambda d: d["speedup_epoch_with_dev"]),
}
summary = {}
for title, (name, key) in rows.items():
    old, new = mean(f"{name}_old", key), mean(f"{name}_new", key)
    summary[title] = {"old": round(old, 2), "new": round(new, 2), "new/old": round(new / old, 2)}
    print(f"{title:48} old {old:8.2f}  new {new:8.2f}  new/old {new / old:5.2f}")
(out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
PY
