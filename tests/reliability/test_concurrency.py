"""Two processes that need the same ELMo cache entry (a multirun, two users): one builds or
repairs it, the other waits and reads it; neither fails."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tiny_tagger import FIXTURE

from ner.common.paths import PROJECT_ROOT
from ner.features.cache import ElmoFeatureCache

SENTENCES = [["The", "cat", "sat", "."], ["Peter", "Blackburn", "visited", "Brussels", "."]] * 8

CHILD = """
    import sys, time
    from pathlib import Path
    from ner.bilm.bilm import BiLM
    from ner.features.cache import cache_key, open_or_build
    root, builds, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    def load_bilm():
        with open(builds, "a") as log:  # one line per build
            log.write("build\\n")
        return BiLM.from_files({options!r}, {weights!r})
    key = cache_key(weights_sha256="w", options={{}}, state="warm", batch_size=2, corpus="c")
    while not go.exists():  # start both at once
        time.sleep(0.01)
    cache = open_or_build(root, key, {sentences!r}, load_bilm, batch_size=2, progress=False)
    print(cache.directory, len(cache))
"""


def run_two(root: Path, tmp_path: Path) -> list[str]:
    code = textwrap.dedent(CHILD).format(
        options=str(FIXTURE / "options.json"),
        weights=str(FIXTURE / "lm_weights.hdf5"),
        sentences=SENTENCES,
    )
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(root), str(tmp_path / "builds"), str(go)],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err
        outputs.append(out.strip())
    return outputs


@pytest.mark.parametrize("start", ["empty", "corrupt"])
def test_two_processes_build_one_entry_once_and_share_it(tmp_path, start):
    root = tmp_path / "cache"
    if start == "corrupt":  # a complete entry whose layers were damaged afterwards
        first = run_two(root, tmp_path)[0]
        layers = Path(first.split()[0]) / "layers.bin"
        layers.write_bytes(b"\0" * layers.stat().st_size)
        (tmp_path / "builds").unlink()
    outputs = run_two(root, tmp_path)
    assert outputs[0] == outputs[1] and outputs[0].endswith(f" {len(SENTENCES)}")
    assert (tmp_path / "builds").read_text() == "build\n"  # built (or repaired) once
    ElmoFeatureCache(Path(outputs[0].split()[0]))  # complete, its checksum verified
