"""ner-elmo's Hydra launcher plugin: SLURM through submitit (``hydra/launcher=slurm``)."""
