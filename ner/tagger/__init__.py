"""The BiLSTM-CRF tagger: model, constrained CRF, ELMo feature cache, batching and training."""
