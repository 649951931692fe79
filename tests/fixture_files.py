"""Where the tests' files are: the tiny ELMo fixture in the repository, and the optional mirror of
real corpora that the tests marked ``mirror`` download from."""

import os
from pathlib import Path

# AllenNLP's tiny ELMo and bilm-tf's outputs for it (Apache-2.0; see NOTICE there).
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "elmo"
# A folder laid out like the public sources (nltk_data/packages/corpora/*.zip,
# reuters21578/reuters21578.tar.gz, wnut17/<its three files>); None runs the suite without it.
MIRROR = Path(os.environ["NER_MIRROR"]) if os.environ.get("NER_MIRROR") else None
