"""A trained tagger as users hold it: the `model/` folder format and the `Tagger` that loads it."""
