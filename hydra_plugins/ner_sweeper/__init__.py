"""ner-elmo's Hydra sweeper plugin: Optuna, resumable (``ner-train -m hparams_search=optuna``)."""
