"""`ner-serve` over a real socket: the API answers, bad input gets a 4xx with a message and never
takes the server down, a request that waits too long gets a 503."""

import hashlib
import http.client
import json
import re
import threading
import time

import pytest
import uvicorn
from live_server import RUN_SCORES, Server, free_port
from tiny_tagger import one_thread

from ner.model.tagger import Tagger
from ner.serving.app import create_app
from ner.serving.schema import Limits

TEXT = "Peter Smith lives in Rome. Anna went to Berlin!"
JSON = {"Content-Type": "application/json"}


def test_health_and_info(server: Server) -> None:
    status, health = server.request("GET", "/health")
    assert status == 200 and health["status"] == "ok"
    status, info = server.request("GET", "/info")
    assert status == 200
    assert info["labels"] == ["LOC", "PER"]
    assert info["tag_scheme"] == "iob2" and info["model_tag_scheme"] == "bioes"
    assert info["tags"][0] == "O" and "S-PER" in info["tags"]
    assert info["bilm"] == {
        "name": "elmo",  # the folder the biLM was saved from
        "layers": 3,
        "output_dim": 32,
        "lstm_dim": 64,
        "projection_dim": 16,
        "state": "warm",
    }
    assert (info["dev_f1"], info["test_f1"]) == (RUN_SCORES["dev"]["f1"], RUN_SCORES["test"]["f1"])

    manifest = (server.model / "archive.json").read_bytes()
    assert info["archive_sha256"] == hashlib.sha256(manifest).hexdigest()
    assert info["model"] == server.model.parent.name
    assert info["limits"]["max_texts"] == 1000
    assert info["precision"] == "float32"


def test_predict_text(server: Server) -> None:
    status, answer = server.request("POST", "/predict", {"text": TEXT})
    assert status == 200
    (document,) = answer["documents"]
    assert document["text"] == TEXT
    assert [t["text"] for t in document["tokens"]][:3] == ["Peter", "Smith", "lives"]
    assert document["sentences"] == [{"start": 0, "end": 26}, {"start": 27, "end": 47}]
    found = [(e["type"], e["start"], e["end"], e["text"]) for e in document["entities"]]
    assert found == [
        ("PER", 0, 11, "Peter Smith"),
        ("LOC", 21, 25, "Rome"),
        ("PER", 27, 31, "Anna"),
        ("LOC", 40, 46, "Berlin"),
    ]
    assert all(0.5 < e["confidence"] <= 1.0 for e in document["entities"])


def test_predict_matches_the_tagger(server: Server) -> None:
    texts = [TEXT, "“Mary” flew from Berlin to Paris on Monday, didn't she?", "nothing here"]
    status, answer = server.request("POST", "/predict", {"texts": texts})
    assert status == 200
    with one_thread():
        expected = Tagger.load(server.model).predict(texts)
    for document, result in zip(answer["documents"], expected, strict=True):
        record = result.to_json()
        assert list(document) == list(record)  # the one shape, keys in the same order
        assert {k: document[k] for k in ("text", "tokens", "tags", "sentences")} == {
            k: record[k] for k in ("text", "tokens", "tags", "sentences")
        }
        assert len(document["entities"]) == len(record["entities"])
        for got, want in zip(document["entities"], record["entities"], strict=True):
            assert got == pytest.approx(want, abs=1e-5)


def test_predict_tokens_keeps_them(server: Server) -> None:
    tokens = [["Anna", "likes", "New\u00a0York", "."], ["Rome"]]
    status, answer = server.request("POST", "/predict", {"tokens": tokens, "include_tokens": True})
    assert status == 200
    for sentence, document in zip(tokens, answer["documents"], strict=True):
        assert [t["text"] for t in document["tokens"]] == sentence
        assert document["text"] == " ".join(sentence)
    assert [e["text"] for e in answer["documents"][1]["entities"]] == ["Rome"]


def test_tokenizer_per_request(server: Server) -> None:
    text = "Anna met @PeterSmith in Rome :-)"
    _, news = server.request("POST", "/predict", {"text": text, "include_tokens": True})
    status, social = server.request(
        "POST", "/predict", {"text": text, "tokenizer": "social", "include_tokens": True}
    )
    assert status == 200
    assert "@PeterSmith" in [t["text"] for t in social["documents"][0]["tokens"]]
    assert "@PeterSmith" not in [t["text"] for t in news["documents"][0]["tokens"]]


BAD_REQUESTS = [
    (b"not json", 400, "not JSON"),
    (b'{"text": "caf\xe9"}', 400, "not valid UTF-8"),
    (b"[1, 2]", 422, "body"),
    (json.dumps({"text": 5}).encode(), 422, "text: Input should be a valid string"),
    (json.dumps({"texts": "one text"}).encode(), 422, "texts: Input should be a valid list"),
    (json.dumps({"tokens": [["Rome", None]]}).encode(), 422, "tokens.0.1"),
    (json.dumps({"text": ""}).encode(), 422, "text is empty"),
    (json.dumps({"text": " \n\t"}).encode(), 422, "empty or whitespace"),
    (json.dumps({"texts": []}).encode(), 422, '"texts" is empty'),
    (json.dumps({"texts": ["Rome", ""]}).encode(), 422, r"texts\[1\] is empty"),
    (json.dumps({"tokens": [["Rome", " "]]}).encode(), 422, "token 1 .* whitespace"),
    (json.dumps({"tokens": [[]]}).encode(), 422, r"tokens\[0\] is an empty sentence"),
    (json.dumps({}).encode(), 422, "exactly one of"),
    (json.dumps({"text": "a", "texts": ["b"]}).encode(), 422, "exactly one of"),
    (json.dumps({"text": "Rome", "tokenizer": "legal"}).encode(), 422, "tokenizer"),
    (json.dumps({"text": "Rome", "colour": "red"}).encode(), 422, "colour: Extra inputs"),
    (json.dumps({"texts": ["a"] * 100_000}).encode(), 413, "100000 items; the limit is 1000"),
    (json.dumps({"text": "a" * 100_001}).encode(), 413, "100001 characters"),
    (json.dumps({"texts": ["a " * 6000] * 10}).encode(), 413, "at least 60000 tokens"),
    (json.dumps({"tokens": [["a"] * 6000] * 10}).encode(), 413, "has 60000 tokens"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD_REQUESTS)
def test_bad_input_gets_a_4xx_with_a_message(
    server: Server, body: bytes, status: int, message: str
) -> None:
    got, answer = server.request("POST", "/predict", body, JSON)
    assert got == status, answer
    assert isinstance(answer, dict)
    assert re.search(message, answer["detail"]), answer["detail"]
    assert server.request("GET", "/health")[0] == 200  # still up


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_predict_takes_only_bodies_declared_as_json(server: Server, content_type: str) -> None:
    """A web page can send a form or text/plain body to any address without asking first: such
    bodies are refused unread, so the page cannot use the API (or its CPU)."""
    before = server.request("GET", "/health")[1]["requests"]
    headers = {"Content-Type": content_type} if content_type else {}
    body = json.dumps({"text": TEXT}).encode()
    status, answer = server.request("POST", "/predict", body, headers)
    assert status == 415 and 'Content-Type: application/json"' in answer["detail"]
    assert server.request("GET", "/health")[1]["requests"] == before  # the model never ran
    json_with_charset = {"Content-Type": "Application/JSON; charset=utf-8"}
    assert server.request("POST", "/predict", body, json_with_charset)[0] == 200


ODD_JSON = [
    (b'{"text": "Rome \\ud800"}', 422, r"^text, character 5 \(U\+D800\) is a lone surrogate"),
    (b'{"tokens": [["Rome", "\\udfff"]]}', 422, r"^tokens\[0\]\[1\], character 0 \(U\+DFFF\)"),
    (b'{"\\ud800": "Rome"}', 422, r"^a key of the body \(U\+D800\) is a lone surrogate"),
    (b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "nests arrays or objects too deeply"),
    (b'{"text": ' + b"1" * 5000 + b"}", 400, "a number of 5000 digits"),
]


@pytest.mark.parametrize(("body", "status", "message"), ODD_JSON)
def test_odd_json_gets_a_json_4xx_without_a_traceback(
    server: Server, body: bytes, status: int, message: str
) -> None:
    """Lone surrogates, deep nesting and huge integers are valid JSON text that Python cannot
    encode or read: they are refused with a reason, before the model runs and without a
    traceback in the log."""
    before = server.request("GET", "/health")[1]["requests"]
    logged = len(server.log.read_bytes())
    got, answer = server.request("POST", "/predict", body, JSON)
    assert (got, isinstance(answer, dict)) == (status, True), answer
    assert re.search(message, answer["detail"]), answer["detail"]
    assert server.request("GET", "/health")[1]["requests"] == before  # the model never ran
    assert b"Traceback" not in server.log.read_bytes()[logged:]


def test_an_escaped_surrogate_pair_is_one_character(server: Server) -> None:
    status, answer = server.request("POST", "/predict", b'{"text": "Rome \\ud83d\\ude00"}', JSON)
    assert status == 200 and answer["documents"][0]["text"] == "Rome \U0001f600"


def test_a_request_over_the_token_limit_is_refused_before_any_text_is_tokenized(
    server: Server,
) -> None:
    """Two texts of 40,000 words already pass the 50,000-token limit, so the first text (a run
    of "+", slow to tokenize) is never tokenized."""
    texts = ["+" * 90_000, "a " * 40_000, "a " * 40_000]
    began = time.monotonic()
    status, answer = server.request("POST", "/predict", {"texts": texts})
    assert status == 413 and answer["detail"] == (
        "the request has at least 80000 tokens; the limit is 50000"
    )
    assert time.monotonic() - began < 5


def test_tokenizing_stops_at_the_text_that_passes_the_token_limit(server: Server) -> None:
    """ "a,a,..." is one word to the cheap count but 80,000 tokens: the texts after it are never
    tokenized."""
    texts = ["a," * 40_000, "+" * 90_000]
    began = time.monotonic()
    status, answer = server.request("POST", "/predict", {"texts": texts})
    assert status == 413 and answer["detail"] == (
        "the request has 80000 tokens up to texts[0]; the limit is 50000"
    )
    assert time.monotonic() - began < 5


def test_ten_megabyte_body_is_refused_unread(server: Server) -> None:
    body = json.dumps({"text": "Rome " * 2_000_000}).encode()  # 10 MB
    status, answer = server.request("POST", "/predict", body, JSON)
    assert status == 413 and "limit is 1000000" in answer["detail"]


def test_ten_megabyte_chunked_body_is_cut_off(server: Server) -> None:
    """Without a Content-Length the body is counted while it arrives."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=60)
    chunk = b"Rome " * 20_000  # 100 kB
    try:
        connection.request(
            "POST", "/predict", body=iter([chunk] * 100), headers=JSON, encode_chunked=True
        )
        response = connection.getresponse()
        answer = json.loads(response.read())
    except (BrokenPipeError, ConnectionResetError):
        pytest.fail("the server closed the connection instead of answering 413")
    finally:
        connection.close()
    assert response.status == 413 and "passes the limit" in answer["detail"]
    assert server.request("GET", "/health")[0] == 200


def test_wrong_method_and_path(server: Server) -> None:
    assert server.request("GET", "/predict")[0] == 405
    assert server.request("GET", "/nothing")[0] == 404


def test_openapi_schema_describes_predict(server: Server) -> None:
    status, schema = server.request("GET", "/openapi.json")
    assert status == 200
    body = schema["paths"]["/predict"]["post"]["requestBody"]["content"]["application/json"]
    assert set(body["schema"]["properties"]) >= {"text", "texts", "tokens", "tokenizer"}


def test_no_page_loads_scripts_from_elsewhere(server: Server) -> None:
    """FastAPI's /docs and /redoc pages load their scripts from a CDN (blank offline, and a
    third party's code next to the API): the server has neither; its own page is self-contained."""
    assert server.request("GET", "/docs")[0] == 404
    assert server.request("GET", "/redoc")[0] == 404
    status, page = server.request("GET", "/")
    assert status == 200 and not re.search(r"(src|href)=[\"']?(https?:)?//", page)


def test_request_that_waits_too_long_gets_503(served_run) -> None:
    """A server whose timeout is shorter than any batch: the caller gets a 503 at once, and
    the server keeps answering."""
    with one_thread():
        tagger = Tagger.load(served_run)
    app = create_app(tagger, served_run, Limits(timeout=0.001), max_wait=0.2)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    try:
        local = Server("127.0.0.1", port, served_run, None)  # type: ignore[arg-type]
        for _ in range(200):
            try:
                local.request("GET", "/health", timeout=5)
                break
            except OSError:
                threading.Event().wait(0.05)
        status, answer = local.request("POST", "/predict", {"text": TEXT})
        assert status == 503 and "not tagged within 0.001 s" in answer["detail"]
        assert local.request("GET", "/health")[0] == 200
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
