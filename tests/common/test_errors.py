"""Every error a user can fix derives from `NerError` (the console scripts print it as one line)
and still from the built-in class it always was, so ``except ValueError``/``OSError`` code keeps
working."""

import pytest

from ner.bilm.options import OptionsError
from ner.bilm.scalar_mix import MixError
from ner.bilm.weights import WeightsError
from ner.common.archives import ArchiveError
from ner.common.checkpoints import CheckpointError
from ner.common.downloads import ChecksumError, DownloadError
from ner.common.errors import InputError, MissingFileError, NerError
from ner.common.schema import ConfigError
from ner.data.columns import ColumnFormatError
from ner.data.tag_schemes import TagSchemeError
from ner.features.cache import CacheError, NonFiniteFeaturesError
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
        (NonFiniteFeaturesError, ValueError),
        (CorpusError, ValueError),
        (ReportError, ValueError),
        (PredictionsError, ValueError),
        (TrainingDiverged, ArithmeticError),
        (InputError, ValueError),
        (MissingFileError, FileNotFoundError),
    ],
)
def test_user_errors_derive_from_ner_error_and_their_builtin(error, builtin):
    assert issubclass(error, NerError) and issubclass(error, builtin)
