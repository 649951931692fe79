"""`ner-serve` as a Label Studio ML backend (`ner.serving.label_studio`), over a real socket:
the protocol's /health, /setup and /predict answer as Label Studio reads them, with the same
entities as /predict, and a body that does not fit gets a 422 naming the field.
(tests/serving/test_label_studio.py connects a real Label Studio server.)"""

import hashlib

from live_server import Server

CONFIG = """<View>
  <Labels name="ner" toName="body">
    <Label value="PER"/><Label value="LOC"/>
  </Labels>
  <Text name="body" value="$content"/>
</View>"""
TEXTS = [
    "Peter Smith lives in Rome. Anna went to Berlin!",
    "nothing here",
    "John Smith went to Paris .",
]


def version(server: Server) -> str:
    manifest = (server.model / "archive.json").read_bytes()
    return f"{server.model.parent.name}-{hashlib.sha256(manifest).hexdigest()[:12]}"


def test_health_and_setup(server: Server) -> None:
    status, health = server.request("GET", "/label-studio/health")
    assert status == 200
    assert health == {"status": "UP", "model_class": "ner-serve", "model_version": version(server)}
    body = {"project": "1.1700000000", "schema": CONFIG, "hostname": "http://localhost:8080"}
    status, answer = server.request("POST", "/label-studio/setup", body)
    assert (status, answer) == (200, {"model_version": version(server)})


def test_predict_answers_one_prediction_per_task_with_the_api_entities(server: Server) -> None:
    tasks = [{"id": n, "data": {"content": text, "other": n}} for n, text in enumerate(TEXTS, 1)]
    body = {"tasks": tasks, "label_config": CONFIG, "project": "1.17", "params": {"context": None}}
    status, answer = server.request("POST", "/label-studio/predict", body)
    assert status == 200, answer
    assert answer["model_version"] == version(server)
    status, api = server.request("POST", "/predict", {"texts": TEXTS})
    assert status == 200
    for prediction, document in zip(answer["results"], api["documents"], strict=True):
        assert prediction["model_version"] == version(server)
        expected = [
            (e["start"], e["end"], e["text"], e["type"], e["confidence"])
            for e in document["entities"]
        ]
        found = [
            (
                r["value"]["start"],
                r["value"]["end"],
                r["value"]["text"],
                *r["value"]["labels"],
                r["score"],
            )
            for r in prediction["result"]
        ]
        assert found == expected
        assert all(
            (r["from_name"], r["to_name"], r["type"]) == ("ner", "body", "labels")
            for r in prediction["result"]
        )
        scores = [r["score"] for r in prediction["result"]]
        assert prediction.get("score") == (min(scores) if scores else None)
    assert [len(p["result"]) for p in answer["results"]][::2] == [4, 2]


def test_bodies_that_do_not_fit_are_refused_naming_the_field(server: Server) -> None:
    def refused(path: str, body: dict) -> str:
        status, answer = server.request("POST", f"/label-studio/{path}", body)
        assert status == 422, answer
        return answer["detail"]

    assert "tasks: expected a list" in refused("predict", {"label_config": CONFIG})
    no_text = {
        "tasks": [{"data": {"content": "Rome"}}, {"data": {"text": "Rome"}}],
        "label_config": CONFIG,
    }
    assert "tasks[1].data.content: expected a text" in refused("predict", no_text)
    assert "label_config is not XML" in refused("predict", {"tasks": [], "label_config": "<View"})
    choices = '<View><Choices name="c" toName="t"/><Text name="t" value="$text"/></View>'
    assert "schema has no <Labels> tag" in refused("setup", {"schema": choices})
    assert "schema: expected the project's labeling config" in refused("setup", {"project": "1"})
    plain = {"Content-Type": "text/plain"}
    assert server.request("POST", "/label-studio/predict", b"{}", plain)[0] == 415
