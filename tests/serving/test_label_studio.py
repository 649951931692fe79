"""A real Label Studio server with `ner-serve` as its ML backend: a project connected to it shows
our pre-annotations on its tasks, accepted they export as annotations that our reader reads as
the same spans, and the tasks of ``ner-predict --format label_studio`` import with their
predictions.

Label Studio comes from a scratch virtual environment outside the repository
(scripts/label_studio_env.sh: made once, minutes, then reused), is started on 127.0.0.1 from a
migrated copy of its database and stopped again, pass or fail. Marked `label_studio`, which the
plain suite leaves out: ``pytest -m label_studio``."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import Server, free_port

from ner.cli.predict import main as predict
from ner.data.label_studio import read_label_studio
from ner.data.spans import SpanFormat, SpanRecord

pytestmark = pytest.mark.label_studio

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ner-elmo-test-token"
CONFIG = """<View>
  <Labels name="label" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>
  <Text name="text" value="$text"/>
</View>"""
TEXTS = [
    "Peter Smith lives in Rome. Anna went to Berlin!",
    "John Smith went to Paris .",
    "Mary flew to Rome yesterday .",
]


class LabelStudio:
    """A running Label Studio and its REST API, as its admin user."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The parsed JSON answer of a request; AssertionError with the answer on a 4xx/5xx."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"}
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read()[:2000]!r}") from None

    def tasks(self, project: int) -> list[dict[str, Any]]:
        return self.call("GET", f"/api/tasks?project={project}&fields=all")["tasks"]

    def predictions(self, task: int) -> list[dict[str, Any]]:
        return self.call("GET", f"/api/predictions?task={task}")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudio]:
    """Label Studio on a free loopback port, started from a copy of the migrated template
    database (its first user made with `TOKEN`), stopped with its process group afterwards."""
    made = subprocess.run(
        ["bash", str(ROOT / "scripts" / "label_studio_env.sh")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    venv = Path(made.stdout.strip())
    data = tmp_path_factory.mktemp("label-studio") / "data"
    shutil.copytree(venv / "template", data)
    port = free_port()
    log = data.parent / "label-studio.log"
    command = [
        str(venv / "bin" / "label-studio"), "start", "--no-browser",
        "--internal-host", "127.0.0.1", "--port", str(port),
        "--data-dir", str(data), "--database", str(data / "label_studio.sqlite3"),
        "--username", "admin@example.com", "--password", "not-a-secret",
        "--user-token", TOKEN, "--enable-legacy-api-token",
    ]  # fmt: skip
    # Label Studio refuses model URLs on loopback and private addresses unless told otherwise.
    env = {**os.environ, "USE_DEFAULT_BANNED_SUBNETS": "false"}
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while not _answers(url):
            assert process.poll() is None, f"Label Studio exited: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no answer in 600 s: {log.read_text()[-3000:]}"
            time.sleep(1)
        yield LabelStudio(url)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def model_version(model: Path) -> str:
    digest = hashlib.sha256((model / "archive.json").read_bytes()).hexdigest()
    return f"{model.parent.name}-{digest[:12]}"


def regions(prediction: dict[str, Any]) -> list[tuple[int, int, str, str, float]]:
    return [
        (r["value"]["start"], r["value"]["end"], r["value"]["text"], *r["value"]["labels"],
         r["score"])
        for r in prediction["result"]
    ]  # fmt: skip


def test_a_project_connected_to_ner_serve_shows_its_pre_annotations(
    label_studio: LabelStudio, server: Server, tmp_path: Path
) -> None:
    project = label_studio.call("POST", "/api/projects", {"title": "ner", "label_config": CONFIG})
    backend = label_studio.call(
        "POST",
        "/api/ml",
        {"url": f"{server.url}/label-studio", "project": project["id"], "title": "ner-serve"},
    )
    assert backend["readable_state"] == "Connected", backend
    assert backend["model_version"] == model_version(server.model)
    imported = label_studio.call(
        "POST", f"/api/projects/{project['id']}/import", [{"text": text} for text in TEXTS]
    )
    assert imported["task_count"] == len(TEXTS)
    label_studio.call(
        "POST",
        f"/api/dm/actions?id=retrieve_tasks_predictions&project={project['id']}",
        {"selectedItems": {"all": True, "excluded": []}},
    )

    _, api = server.request("POST", "/predict", {"texts": TEXTS})
    tasks = sorted(label_studio.tasks(project["id"]), key=lambda task: task["id"])
    assert [task["data"]["text"] for task in tasks] == TEXTS
    for task, document in zip(tasks, api["documents"], strict=True):
        (prediction,) = label_studio.predictions(task["id"])
        assert prediction["model_version"] == model_version(server.model)
        assert regions(prediction) == [
            (e["start"], e["end"], e["text"], e["type"], e["confidence"])
            for e in document["entities"]
        ]
        assert prediction["score"] == pytest.approx(
            min(e["confidence"] for e in document["entities"])
        )

    # Accepted as annotations and exported, they read back as the same spans.
    label_studio.call(
        "POST",
        f"/api/dm/actions?id=predictions_to_annotations&project={project['id']}",
        {"selectedItems": {"all": True, "excluded": []}},
    )
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps(
            label_studio.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON")
        ),
        encoding="utf-8",
    )
    records = list(read_label_studio(export, SpanFormat("label_studio")))
    assert all(isinstance(record, SpanRecord) for record in records), records
    read = {record.text: [(s.start, s.end, s.label) for s in record.spans] for record in records}
    assert read == {
        document["text"]: [(e["start"], e["end"], e["type"]) for e in document["entities"]]
        for document in api["documents"]
    }


def test_ner_predict_tasks_import_with_their_predictions(
    label_studio: LabelStudio, server: Server, tmp_path: Path
) -> None:
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    tasks_file = tmp_path / "tasks.json"
    arguments = [str(tmp_path / "in.txt"), "-o", str(tasks_file), "--format", "label_studio"]
    assert predict([str(server.model), *arguments, "--threads", "1"]) == 0
    written = json.loads(tasks_file.read_text(encoding="utf-8"))
    project = label_studio.call("POST", "/api/projects", {"title": "file", "label_config": CONFIG})
    imported = label_studio.call("POST", f"/api/projects/{project['id']}/import", written)
    assert (imported["task_count"], imported["prediction_count"]) == (len(TEXTS), len(TEXTS))
    tasks = sorted(label_studio.tasks(project["id"]), key=lambda task: task["id"])
    for task, expected in zip(tasks, written, strict=True):
        assert task["data"] == expected["data"]
        (prediction,) = label_studio.predictions(task["id"])
        (wanted,) = expected["predictions"]
        assert regions(prediction) == regions(wanted) and regions(wanted)
        assert prediction["model_version"] == wanted["model_version"] == model_version(server.model)
        assert prediction["score"] == pytest.approx(wanted["score"])
