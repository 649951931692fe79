"""One tagged text has one JSON shape: a line of ``ner-predict --format jsonl``, a document of
the HTTP API and a record of the ``--format html`` page are the same `TaggedText.to_json`
object; and the server reads its scores from the model folder, or, for a folder saved before it
kept them, from the run's results.json beside it."""

import json
from pathlib import Path

from live_server import RUN_SCORES, Server
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main as predict
from ner.model.tagger import Tagger
from ner.serving.app import run_scores

LINES = [
    "Peter Smith lives in Rome. Anna went to Berlin!",
    "“Mary” flew from Berlin to Paris on Monday, didn't she?",
    "nothing here",
]
OPEN = '<script type="application/json" id="ner-data">'


def test_jsonl_http_and_html_give_the_same_objects(server: Server, tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    outputs = {form: tmp_path / f"out.{form}" for form in ("jsonl", "html")}
    with one_thread():  # as the server: one thread, so the same floats
        for form, output in outputs.items():
            status = predict([str(server.model), str(source), "--format", form, "-o", str(output)])
            assert status == 0, capsys.readouterr().err
    jsonl = [json.loads(line) for line in outputs["jsonl"].read_text("utf-8").splitlines()]
    assert [record.pop("line") for record in jsonl] == [1, 2, 3]
    page = outputs["html"].read_text(encoding="utf-8")
    start = page.index(OPEN) + len(OPEN)
    html = json.loads(page[start : page.index("</script>", start)])["records"]
    status, answer = server.request("POST", "/predict", {"texts": LINES})
    assert status == 200
    assert answer["documents"] == jsonl == html
    assert any(record["entities"] for record in jsonl)


def test_scores_come_from_the_model_folder(tmp_path: Path) -> None:
    scores = {"dev": {"f1": 90.5, "accuracy": 97.0}, "test": {"f1": 88.0, "accuracy": 96.5}}
    folder = tmp_path / "run" / "model"
    Tagger.load(saved_model()).save(folder, scores=scores)
    (tmp_path / "run" / "results.json").write_text(json.dumps(RUN_SCORES))
    tagger = Tagger.load(folder)
    assert tagger.scores == scores
    assert run_scores(tagger, folder) == (90.5, 88.0)
    assert run_scores(tagger, folder, "accuracy") == (97.0, 96.5)
    # saved again (as `ner-models export` does), the folder keeps them
    tagger.save(tmp_path / "copy")
    assert Tagger.load(tmp_path / "copy").scores == scores


def test_an_older_folder_falls_back_to_the_run_results(tmp_path: Path) -> None:
    tagger = Tagger.load(saved_model())
    assert tagger.scores is None
    assert run_scores(tagger, saved_model()) == (None, None)
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(RUN_SCORES))
    assert run_scores(tagger, run / "model") == (97.5, 91.25)
