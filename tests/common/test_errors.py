"""Every error a user can fix derives from `NerError` (the console scripts print it as one line)
and still from the built-in class it always was, so ``except ValueError``/``OSError`` code keeps
working."""

import pytest

from ner.bilm.options import OptionsError
from ner.bilm.scalar_mix import MixError
from ner.bilm.weights import WeightsError
from ner.common.archives import ArchiveError
from ner.common.checkpoints import CheckpointError
from ner.common.downloads import ChecksumError, DownloadError, DownloadRefused, TooLargeError
from ner.common.errors import (
    FileAccessError,
    InputError,
    MissingFileError,
    NerError,
)
from ner.common.files import open_input
from ner.common.schema import ConfigError
from ner.data.columns import ColumnFormatError
from ner.data.tag_schemes import TagSchemeError
from ner.embeddings.glove import EmbeddingFormatError
from ner.features.cache import CacheError, CacheNotWritableError, NonFiniteFeaturesError
from ner.pretrain.corpus import CorpusError
from ner.reporting.runs import ReportError
from ner.reporting.significance import PredictionsError
from ner.training.loop import TrainingDiverged


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (OptionsError, ValueError),
        (MixError, ValueError),
        (WeightsError, ValueError),
        (ArchiveError, ValueError),
        (CheckpointError, ValueError),
        (ChecksumError, OSError),
        (DownloadError, OSError),
        (ConfigError, ValueError),
        (ColumnFormatError, ValueError),
        (TagSchemeError, ValueError),
        (CacheError, OSError),
        (CacheNotWritableError, PermissionError),
        (NonFiniteFeaturesError, ValueError),
        (CorpusError, ValueError),
        (ReportError, ValueError),
        (PredictionsError, ValueError),
        (TrainingDiverged, ArithmeticError),
        (InputError, ValueError),
        (MissingFileError, FileNotFoundError),
        (FileAccessError, OSError),
        (DownloadRefused, OSError),
        (TooLargeError, OSError),
        (EmbeddingFormatError, ValueError),
    ],
)
def test_user_errors_derive_from_ner_error_and_their_builtin(error, builtin):
    assert issubclass(error, NerError) and issubclass(error, builtin)


def test_a_users_file_that_cannot_be_opened_is_a_user_error_naming_it(tmp_path):
    with pytest.raises(MissingFileError) as missing:
        open_input(tmp_path / "missing.txt")
    assert str(missing.value) == f"{tmp_path / 'missing.txt'}: No such file or directory"
    with pytest.raises(FileAccessError) as folder:
        open_input(tmp_path)
    assert str(folder.value) == f"{tmp_path}: Is a directory"
