"""The ELMo biLM in PyTorch: exact AllenNLP/bilm-tf numerics, weights, state modes, scalar mix."""
