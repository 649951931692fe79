"""NER and sequence labeling on a frozen ELMo biLM."""
