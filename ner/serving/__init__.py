"""A trained tagger in use: the model/ archive format, the `Tagger` that loads it, and the
`ner-serve` web application (API, micro-batching, the entity page, static HTML output)."""
