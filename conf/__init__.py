"""The Hydra configs shipped with the package: ``train.yaml`` (ner-train) and ``pretrain.yaml``
(ner-pretrain) with the training groups beside them (the pretraining groups are in
``ner/pretrain/conf/``, on ``pretrain.yaml``'s search path alone).

Hydra imports this package to read the files; importing it registers what the files name: the
typed schemas (``train_schema``, ``pretrain_schema``) and the ``${shipped_bilm:}`` resolver.
"""

import ner.pretrain.config
import ner.training.config  # noqa: F401
