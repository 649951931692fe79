"""One dataclass per corpus source holds its options: the training schema's ``data.options`` is
their union, and an option a source does not take is refused naming the option and the source
(at its default it sets nothing and passes)."""

import re
from dataclasses import fields

import pytest
from omegaconf import OmegaConf

from ner.common.errors import InputError
from ner.data.corpus_options import SOURCES, options_of
from ner.training.config import CorpusOptions


def test_the_schemas_options_are_the_union_of_the_sources():
    union = {spec.name for source in SOURCES.values() for spec in fields(source)}
    assert {spec.name for spec in fields(CorpusOptions)} == union
    assert set(OmegaConf.structured(CorpusOptions).values()) == {None}  # null: the source's own


@pytest.mark.parametrize(
    ("kind", "option", "message"),
    [
        ("named", {"encoding": "latin-1"}, "encoding='latin-1': x is a named corpus"),
        ("named", {"holdout_seed": 3}, "holdout_seed=3: x is a named corpus"),
        ("hub", {"format": "conllu"}, "format='conllu': x is a hub dataset"),
        ("files", {"tokenizer": "social"}, "tokenizer='social': x is column files"),
        ("conllu", {"columns": ["tokens", "tags"]}, "columns=['tokens', 'tags']: x is CoNLL-U"),
        ("spans", {"label_column": "pos"}, "label_column='pos': x is span annotations"),
    ],
)
def test_an_option_the_source_does_not_take_is_refused_naming_both(kind, option, message):
    with pytest.raises(InputError, match=rf"^{re.escape(message)}.*; it does not take it$"):
        options_of(kind, "x", option)


def test_an_option_the_source_does_not_take_at_its_default_sets_nothing():
    options = options_of("named", "x", {"holdout_seed": 0, "columns": None, "tag_column": -1})
    assert not hasattr(options, "holdout_seed") and options.max_sentence_tokens == 5000
    assert options_of("hub", "x", {}).tag_column == "ner_tags"
    assert options_of("files", "x", {"tag_column": 2}).tag_column == 2
