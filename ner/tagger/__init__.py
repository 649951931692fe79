"""The BiLSTM-CRF tagger: model, char-CNN and BiLSTM encoders, vocabularies, constrained CRF and
marginals, batches of examples."""
