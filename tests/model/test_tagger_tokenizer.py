"""The tokenizer choice when tagging raw text: `Tagger(tokenizer=...)` and ``ner-predict
--tokenizer``; and a byte-order mark at the start of a ner-predict input file."""

import json

import pytest
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main
from ner.model.tagger import Tagger

POST = "Off to Paris with @Anna_Smith #travel :) https://t.co/x"


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


def token_texts(result) -> list[str]:
    return [t.text for t in result.tokens]


def test_tagger_tokenizer_choice():
    news = Tagger.load(saved_model()).predict(POST)[0]
    social = Tagger.load(saved_model(), tokenizer="social").predict(POST)[0]
    assert token_texts(news)[4:8] == ["@", "Anna_Smith", "#", "travel"]
    assert token_texts(social) == ["Off", "to", "Paris", "with", *POST.split()[4:]]
    assert all(POST[t.start : t.end] == t.text for t in social.tokens)
    assert all(POST[e.start : e.end] == e.text for e in social.entities)
    assert len(social.tags) == len(social.tokens)
    with pytest.raises(ValueError, match="unknown tokenizer 'twitter'"):
        Tagger.load(saved_model(), tokenizer="twitter")


def run(args: list[str], capsys) -> tuple[int, str, str]:
    status = main([str(saved_model()), *args, "--threads", "1"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_predict_tokenizer_option(tmp_path, capsys):
    source = tmp_path / "posts.txt"
    source.write_text(POST + "\n")
    status, out, _ = run([str(source), "--tokenizer", "social"], capsys)
    assert status == 0
    record = json.loads(out)
    assert [t["text"] for t in record["tokens"]][4:7] == ["@Anna_Smith", "#travel", ":)"]
    with pytest.raises(SystemExit):
        main([str(saved_model()), str(source), "--tokenizer", "tweets"])
    assert "invalid choice: 'tweets'" in capsys.readouterr().err


@pytest.mark.parametrize("input_format", ["text", "tokens", "conll"])
def test_predict_drops_a_byte_order_mark(tmp_path, capsys, input_format):
    source = tmp_path / "in.txt"
    source.write_bytes(b"\xef\xbb\xbfRome is nice .\n")
    if input_format == "conll":
        source.write_bytes("\ufeff-DOCSTART- O\n\nRome B-LOC\nis O\n".encode())
    status, out, _ = run([str(source), "--input-format", input_format, "--format", "conll"], capsys)
    assert status == 0 and "\ufeff" not in out
    tokens = [line.split()[0] for line in out.splitlines() if line and "DOCSTART" not in line]
    assert tokens[:2] == ["Rome", "is"]
