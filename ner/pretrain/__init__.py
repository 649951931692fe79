"""Pretraining ELMo biLMs from raw text (`python -m ner.pretrain`)."""
