"""The Hydra configs shipped with the package: ``train.yaml`` (ner-train) and ``pretrain.yaml``
(ner-pretrain) with the training groups beside them."""
