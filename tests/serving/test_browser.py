"""The entity page in a real browser: headless Chromium (the system package; .ci/run installs it)
opens the `ner-serve` page, types a sentence, submits it, and the highlighted spans are checked
in the DOM and saved as a screenshot; the static page of ``ner-predict --format html`` renders
the same way from a file."""

import json
from pathlib import Path

import pytest
from devtools import Browser, chromium_path
from live_server import Server
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main as predict

SENTENCE = "Peter Smith lives in Rome. Anna went to Berlin!"
EXPECTED = [("Peter Smith", "PER"), ("Rome", "LOC"), ("Anna", "PER"), ("Berlin", "LOC")]

MARKS = """JSON.stringify([...document.querySelectorAll("mark.ner-entity")].map((m) => ({
  text: m.firstChild.textContent, type: m.dataset.type, title: m.title,
  start: Number(m.dataset.start), end: Number(m.dataset.end),
  confidence: Number(m.dataset.confidence),
  colour: getComputedStyle(m).backgroundColor })))"""


@pytest.fixture
def browser():
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does)")
    running = Browser(executable)
    yield running
    running.close()


def check_marks(marks: list[dict], text: str) -> None:
    assert [(m["text"], m["type"]) for m in marks] == EXPECTED
    for mark in marks:
        assert text[mark["start"] : mark["end"]] == mark["text"]
        assert 0.5 < mark["confidence"] <= 1.0
        assert mark["title"] == f"{mark['type']} · confidence {mark['confidence']:.3f}"
    colours = {m["type"]: m["colour"] for m in marks}
    assert len(set(colours.values())) == 2  # one colour per type
    assert all(m["colour"] == colours[m["type"]] for m in marks)


def test_page_highlights_typed_text(server: Server, browser: Browser, tmp_path: Path) -> None:
    browser.goto(server.url + "/")
    legend = browser.wait_for(
        "[...document.querySelectorAll('.ner-legend-item')].map((e) => e.textContent)"
    )
    assert legend == ["LOC", "PER"]
    assert "test F1 91.25" in browser.evaluate("document.getElementById('model').textContent")
    browser.type_text("#text", SENTENCE)
    assert browser.evaluate("document.getElementById('text').value") == SENTENCE
    browser.click("#submit")
    browser.wait_for("document.querySelectorAll('mark.ner-entity').length === 4")
    check_marks(json.loads(browser.evaluate(MARKS)), SENTENCE)
    shown = browser.evaluate("document.querySelector('.ner-text').textContent")
    assert shown.replace("PER", "").replace("LOC", "") == SENTENCE  # labels aside, the text
    answer = json.loads(browser.evaluate("document.getElementById('json').textContent"))
    assert [e["text"] for e in answer["documents"][0]["entities"]] == [t for t, _ in EXPECTED]
    shot = browser.screenshot(tmp_path / "ner-serve-page.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


def test_page_shows_the_error_of_bad_input(server: Server, browser: Browser) -> None:
    browser.goto(server.url + "/")
    browser.wait_for("document.querySelectorAll('.ner-legend-item').length === 2")
    browser.click("#submit")  # empty text
    error = browser.wait_for("document.getElementById('error').textContent")
    assert error == "422: text is empty or whitespace only"
    assert browser.evaluate("document.querySelectorAll('mark.ner-entity').length") == 0


def test_static_html_from_ner_predict(browser: Browser, tmp_path: Path, capsys) -> None:
    source, page = tmp_path / "news.txt", tmp_path / "news.html"
    source.write_text(f"{SENTENCE}\n<script>alert(1)</script> in Rome\n", encoding="utf-8")
    with one_thread():
        status = predict([str(saved_model()), str(source), "--format", "html", "-o", str(page)])
    assert status == 0, capsys.readouterr().err
    browser.goto(page.as_uri())
    browser.wait_for("document.querySelectorAll('.ner-doc').length === 2")
    marks = json.loads(browser.evaluate(MARKS))
    check_marks(marks[:4], SENTENCE)
    second_line = "<script>alert(1)</script> in Rome"
    assert ("Rome", "LOC") in [(m["text"], m["type"]) for m in marks[4:]]
    assert all(second_line[m["start"] : m["end"]] == m["text"] for m in marks[4:])
    # the input is text, never markup
    assert browser.evaluate("document.querySelectorAll('.ner-doc script').length") == 0
    second = browser.evaluate("document.querySelectorAll('.ner-text')[1].textContent")
    assert second.replace("LOC", "").replace("PER", "") == second_line
    legend = browser.evaluate(
        "[...document.querySelectorAll('.ner-legend-item')].map((e) => e.textContent)"
    )
    assert legend == ["LOC", "PER"]
