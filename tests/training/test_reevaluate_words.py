"""Re-evaluating a run that has no model/ folder rebuilds the words of its frozen GloVe rows."""

import pytest

from ner.embeddings.pretrained import load_pretrained_words
from ner.tagger.dataset import Vocabularies
from ner.training.reevaluate import pretrained_words
from ner.training.setup import CHECKPOINT_VOCABULARIES


# "encoder": the vocabularies' key in checkpoints written before they were called so
@pytest.mark.parametrize("key", [CHECKPOINT_VOCABULARIES, "encoder"])
def test_words_outside_train_keep_their_glove_rows(tmp_path, key):
    glove = tmp_path / "glove.txt"
    glove.write_text("paris 1 2\nzanzibar 3 4\n")
    vocabularies = Vocabularies.build([["Paris", "is", "big"]], ["O"])
    extension = load_pretrained_words(str(glove), vocabularies.words, dim=2, seed=1).extension
    saved = {key: vocabularies.to_json(), "model_config": {"pretrained_words": len(extension)}}
    config = {"seed": 1, "embeddings": {"glove": {"source": str(glove), "dim": 2}}}
    rebuilt = Vocabularies.from_saved(saved, CHECKPOINT_VOCABULARIES)
    assert rebuilt.to_json() == vocabularies.to_json()
    rebuilt.pretrained = pretrained_words(saved, config)
    assert rebuilt.word_id("Zanzibar") == len(vocabularies.words)  # the first row after the trained
    assert rebuilt.word_id("Qwxzz") == 1  # unknown
    glove.write_text("paris 1 2\n")  # the vectors file changed since training
    with pytest.raises(ValueError, match="no longer matches the run"):
        pretrained_words(saved, config)
