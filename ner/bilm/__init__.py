"""ELMo biLM in PyTorch: exact AllenNLP/bilm-tf numerics, state modes, scalar mix, ner-embed."""
