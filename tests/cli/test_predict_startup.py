"""A cold `ner-predict` stays quick: tagging text imports neither scikit-learn (through seqeval's
scorers, about a second) nor torch's compiler (through the meta-device size check, about 1.5 s);
only scoring gold-tagged input needs the former."""

import json
import subprocess
import sys

from tiny_tagger import saved_model

from ner.common.paths import PROJECT_ROOT

PROBE = """
import json, sys
from ner.cli.predict import main
main([sys.argv[1], sys.argv[2], "--threads", "1"])
print(json.dumps({name: name in sys.modules for name in ("sklearn", "torch._dynamo")}))
"""


def test_tagging_text_imports_neither_scikit_learn_nor_the_compiler(tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("John Smith lives in Paris .\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(saved_model()), str(text)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    *tagged, imported = done.stdout.strip().splitlines()
    assert json.loads(tagged[0])["entities"]
    assert json.loads(imported) == {"sklearn": False, "torch._dynamo": False}
