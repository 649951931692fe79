"""Re-evaluating a run that has no model/ folder rebuilds the words of its frozen GloVe rows."""

import pytest

from ner.embeddings.pretrained import load_pretrained_words
from ner.tagger.dataset import Encoder
from ner.training.reevaluate import pretrained_words


def test_words_outside_train_keep_their_glove_rows(tmp_path):
    glove = tmp_path / "glove.txt"
    glove.write_text("paris 1 2\nzanzibar 3 4\n")
    encoder = Encoder.build([["Paris", "is", "big"]], ["O"])
    extension = load_pretrained_words(str(glove), encoder.words, dim=2, seed=1).extension
    saved = {"encoder": encoder.to_json(), "model_config": {"pretrained_words": len(extension)}}
    config = {"seed": 1, "embeddings": {"glove": {"source": str(glove), "dim": 2}}}
    rebuilt = Encoder.from_json(saved["encoder"])
    rebuilt.pretrained = pretrained_words(saved, config)
    assert rebuilt.word_id("Zanzibar") == len(encoder.words)  # the first row after the trained
    assert rebuilt.word_id("Qwxzz") == 1  # unknown
    glove.write_text("paris 1 2\n")  # the vectors file changed since training
    with pytest.raises(ValueError, match="no longer matches the run"):
        pretrained_words(saved, config)
