"""Where the tests' files are: the tiny ELMo fixtures in the repository (and a zip of one), and
the optional mirror of real corpora that the tests marked ``mirror`` download from."""

import os
import zipfile
from pathlib import Path

# AllenNLP's tiny ELMo and bilm-tf's outputs for it (Apache-2.0; see NOTICE there).
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "elmo"
# A folder laid out like the public sources (nltk_data/packages/corpora/*.zip,
# reuters21578/reuters21578.tar.gz, wnut17/<its three files>); None runs the suite without it.
MIRROR = Path(os.environ["NER_MIRROR"]) if os.environ.get("NER_MIRROR") else None
# Two tiny ELMoForManyLangs models made by the package's own code (MIT; see LICENSE there).
EFML = FIXTURE.parent / "efml"


def zip_of(folder: Path, target: Path, inner: str = "") -> Path:
    """A zip of the folder's files, at its top level or under `inner`/, as models are shipped."""
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, f"{inner}/{path.name}" if inner else path.name)
    return target
