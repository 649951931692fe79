"""Pretrained word embeddings (GloVe and word2vec text files)."""
