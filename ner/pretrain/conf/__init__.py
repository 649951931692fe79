"""The config groups of ``conf/pretrain.yaml`` (corpus, vocab, model, pretrain, wandb): on the
search path of ``ner-pretrain`` alone (the YAML adds it), so ``ner-train`` does not list them."""
