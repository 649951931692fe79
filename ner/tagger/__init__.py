"""The BiLSTM-CRF tagger: model, encoders, constrained CRF and marginals, batches of examples."""
