"""Per-token models (part of speech) in `Tagger`, `ner-serve` and `ner-predict`: each token's
label and its probability, checked against the model's own distribution computed by brute force
(every label sequence of a short sentence for the CRF, the softmax without one)."""

import itertools
import json

import pytest
import torch
from fastapi.testclient import TestClient

from ner.cli.predict import main as predict_main
from ner.model.saving import save_tagger
from ner.model.tagger import Tagger
from ner.serving.app import create_app
from ner.tagger.dataset import Vocabularies, collate
from ner.tagger.model import TaggerModel

LABELS = ["DT", "NN", "VBZ"]
SENTENCES = [["the", "dog", "barks"], ["a", "cat", "sees", "the", "dog"]]


def token_model(crf: bool, seed: int = 0) -> tuple[TaggerModel, Vocabularies]:
    """A small per-token tagger with random weights (any weights define a distribution)."""
    vocabularies = Vocabularies.build(SENTENCES, LABELS)
    torch.manual_seed(seed)
    model = TaggerModel(
        tags=LABELS, tag_scheme="tokens", crf=crf, num_words=len(vocabularies.words), word_dim=8,
        num_chars=len(vocabularies.chars), char_dim=4, char_filters=8, hidden_size=8, num_layers=1,
        dropout=0.0,
    )  # fmt: skip
    with torch.no_grad():  # pronounced transitions, so that the CRF is not a softmax in disguise
        if model.crf is not None:
            model.crf.transitions.copy_(torch.randn(3, 3) * 2)
    return model.eval(), vocabularies


def brute_force(model: TaggerModel, vocabularies: Vocabularies, tokens: list[str]):
    """The best label sequence and each position's P(label) under the model, by enumeration."""
    batch = collate([vocabularies.encode(0, tokens, None)])
    with torch.no_grad():
        emissions = model.emissions(batch)[0].double()  # (T, K)
    if model.crf is None:
        probabilities = emissions.softmax(-1)
        return probabilities.argmax(-1).tolist(), probabilities
    start, transitions, end = (
        s.detach().double()
        for s in (model.crf.start_transitions, model.crf.transitions, model.crf.end_transitions)
    )
    scores = {}
    for path in itertools.product(range(len(LABELS)), repeat=len(tokens)):
        score = start[path[0]] + end[path[-1]] + sum(emissions[t, k] for t, k in enumerate(path))
        score = score + sum(transitions[a, b] for a, b in itertools.pairwise(path))
        scores[path] = float(score)
    norm = torch.logsumexp(torch.tensor(list(scores.values()), dtype=torch.double), 0)
    marginals = torch.zeros(len(tokens), len(LABELS), dtype=torch.double)
    for path, score in scores.items():
        for t, k in enumerate(path):
            marginals[t, k] += torch.exp(torch.tensor(score, dtype=torch.double) - norm)
    return list(max(scores, key=scores.get)), marginals


@pytest.fixture(params=[True, False], ids=["crf", "softmax"])
def saved(request, tmp_path):
    model, vocabularies = token_model(crf=request.param)
    directory = save_tagger(
        tmp_path / "run" / "model", model, vocabularies, None, corpus_scheme="tokens"
    )
    scores = {"dev": {"accuracy": 91.5}, "test": {"accuracy": 90.25}}
    (tmp_path / "run" / "results.json").write_text(json.dumps(scores))
    return model, vocabularies, directory


def test_each_token_gets_its_label_and_probability(saved):
    model, vocabularies, directory = saved
    tagger = Tagger.load(directory)
    assert tagger.labels == "tokens" and tagger.tag_scheme == "tokens"
    for tokens, result in zip(SENTENCES, tagger.predict_tokens(SENTENCES), strict=True):
        best, probabilities = brute_force(model, vocabularies, tokens)
        assert result.tags == [LABELS[k] for k in best] and result.entities == []
        expected = [float(probabilities[t, k]) for t, k in enumerate(best)]
        assert result.confidences == pytest.approx(expected, abs=1e-9)
        record = result.to_json()
        assert [t["tag"] for t in record["tokens"]] == result.tags
        assert [t["confidence"] for t in record["tokens"]] == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError, match="per-token labels, which have no chunk scheme"):
        Tagger.load(directory, tag_scheme="bioes")


def test_the_server_answers_labels_and_confidences(saved):
    _, _, directory = saved
    tagger = Tagger.load(directory)
    with TestClient(create_app(tagger, directory), base_url="http://localhost") as client:
        info = client.get("/info").json()
        assert info["label_kind"] == "tokens" and info["labels"] == LABELS
        assert (info["dev_accuracy"], info["test_accuracy"]) == (91.5, 90.25)
        assert info["test_f1"] is None
        answer = client.post("/predict", json={"tokens": [SENTENCES[0]]}).json()
    (document,) = answer["documents"]
    expected = tagger.predict_tokens([SENTENCES[0]])[0]
    assert document["entities"] == []  # tokens come back without include_tokens
    assert [t["tag"] for t in document["tokens"]] == expected.tags
    assert [t["confidence"] for t in document["tokens"]] == pytest.approx(
        expected.confidences, abs=1e-6
    )  # rounded to 6 decimals


def test_ner_predict_writes_labels_in_every_format(saved, tmp_path, capsys):
    _, _, directory = saved
    tagger = Tagger.load(directory)
    expected = [r.tags for r in tagger.predict_tokens(SENTENCES)]
    source = tmp_path / "input.txt"
    source.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n")
    out = tmp_path / "out"

    def run(*args: str) -> str:
        assert predict_main([str(directory), *args, "-o", str(out), "--threads", "1"]) == 0
        return out.read_text()

    records = [
        json.loads(line)
        for line in run(str(source), "--input-format", "tokens").split("\n")
        if line
    ]
    assert [[t["tag"] for t in r["tokens"]] for r in records] == expected
    assert all(0 < t["confidence"] <= 1 for r in records for t in r["tokens"])
    conll = run(str(source), "--input-format", "tokens", "--format", "conll")
    rows = [line.split("\t") for line in conll.splitlines() if line]
    assert [tag for _, tag in rows] == [tag for tags in expected for tag in tags]
    page = run(str(source), "--input-format", "tokens", "--format", "html")
    assert '"kind": "tokens"' in page and "nerRenderTokens" in page
    # Gold-labelled CoNLL input is scored by token accuracy, not as chunk tags: a chunk (here of
    # one sentence) at a time, as the whole file is.
    labels = [expected[0], ["DT" if tag == "NN" else "NN" for tag in expected[1]]]
    gold = tmp_path / "gold.conll"
    gold.write_text(
        "".join("".join(f"{w} {g}\n" for w, g in zip(s, tags, strict=True)) + "\n"
                for s, tags in zip(SENTENCES, labels, strict=True))
    )  # fmt: skip
    whole = tagger.evaluate(SENTENCES, labels)
    assert 0 < whole.scores["accuracy"] < 100
    scores = tmp_path / "scores.json"
    conll = ["--input-format", "conll", "--format", "conll", "--chunk-lines", "1"]
    tagged = run(str(gold), *conll, "--scores", str(scores))
    assert json.loads(scores.read_text()) == whole.record()
    assert f"ner-predict: {whole.summary()}" in capsys.readouterr().err
    folder = tmp_path / "folder"
    assert (
        predict_main(
            [str(directory), str(gold), "--output-dir", str(folder), *conll, "--threads", "1"]
        )
        == 0
    )
    assert (folder / "gold.conll").read_text() == tagged
    assert capsys.readouterr().err.count(whole.summary()) == 1


def test_span_pre_annotations_are_refused(saved, tmp_path, capsys):
    _, _, directory = saved
    source = tmp_path / "input.txt"
    source.write_text("the dog barks\n")
    for output_format in ("label_studio", "doccano"):
        arguments = [str(directory), str(source), "--format", output_format, "--threads", "1"]
        assert predict_main(arguments) == 2
        assert f"--format {output_format} writes entity spans, and this model tags per-token" in (
            capsys.readouterr().err
        )
    config = '<View><Labels name="l" toName="t"/><Text name="t" value="$text"/></View>'
    with TestClient(
        create_app(Tagger.load(directory), directory), base_url="http://localhost"
    ) as client:
        for path, body in [
            ("setup", {"schema": config}),
            ("predict", {"tasks": [{"data": {"text": "the dog"}}], "label_config": config}),
        ]:
            answer = client.post(f"/label-studio/{path}", json=body)
            assert answer.status_code == 422
            assert "per-token labels" in answer.json()["detail"]
