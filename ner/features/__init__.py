"""Frozen-biLM features for a corpus: computed live per batch or read from an on-disk cache."""
