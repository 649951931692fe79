"""A trained tagger in use: the model/ archive format and the `Tagger` that loads it."""
