"""``python -m ner.data``: the older spelling of the ``ner-data`` command (``ner/cli/data.py``)."""

import sys

from ner.cli.data import main

sys.exit(main())
