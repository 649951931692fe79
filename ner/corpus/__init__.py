"""Tagging a corpus of any size (``ner-predict MODEL INPUT... --output-dir DIR``): the inputs and
the output file each gives (`inputs`), work cut into shards at chunk boundaries (`shards`), a
manifest that makes a rerun resume only what is unfinished (`manifest`), worker processes that
load the model once (`workers`), progress and the final summary (`progress`), and the run that
ties them together (`run`)."""
