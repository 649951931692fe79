"""Training the tagger: a run from its config, the loop, checkpoints, loggers, evaluation."""
