"""``ner-predict --engine ray`` on a real two-node Ray cluster on this machine (a head and a second
node of one CPU each, on 127.0.0.1): two actors, one on each node, write the bytes of
``--engine local``; `RayTagger` in Ray Data's ``map_batches`` tags a dataset as ``ner-predict``
does; and without Ray, the command says which extra to install and nothing else imports Ray."""

import json
import subprocess
import sys

import pytest
from test_run import OPTIONS, make_corpus, outputs, predict
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main
from ner.corpus.workers import TagOptions


@pytest.fixture(scope="module")
def cluster():
    """A head and a second node of one CPU each, on loopback; shut down even when a test fails."""
    import ray
    from ray.cluster_utils import Cluster

    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # every Ray process on 127.0.0.1
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        try:
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            yield cluster
        finally:
            ray.shutdown()
            cluster.shutdown()


@pytest.mark.ray
def test_ray_engine_writes_the_bytes_of_the_local_engine_from_actors_on_both_nodes(
    tmp_path, cluster
):
    import ray
    from ray.util.state import list_actors

    texts = make_corpus(tmp_path / "in")
    with one_thread():
        assert predict(tmp_path / "in", "--output-dir", tmp_path / "local") == 0
    expected = outputs(tmp_path / "local")
    assert set(expected) == set(texts)
    ray_options = ["--engine", "ray", "--ray-address", cluster.address, "--jobs", "2"]
    assert predict(tmp_path / "in", "--output-dir", tmp_path / "ray", *ray_options) == 0
    assert outputs(tmp_path / "ray") == expected
    ray.init(address=cluster.address)
    actors = list_actors(filters=[("class_name", "=", "RayTagger")], detail=True)
    assert len(actors) == 2 and len({actor.node_id for actor in actors}) == 2


@pytest.mark.ray
def test_ray_tagger_tags_a_ray_dataset_as_ner_predict_does(tmp_path, cluster):
    import ray

    from ner.corpus.ray_tagger import RayTagger

    lines = ["John Smith went to Paris .", "", "Anna likes Rome and Berlin .", "It rained ."] * 3
    source = tmp_path / "news.txt"
    source.write_text("\n".join(lines) + "\n")
    with one_thread():
        assert main([str(saved_model()), str(source), "-o", str(tmp_path / "cli.jsonl")]) == 0
    expected = [json.loads(line) for line in (tmp_path / "cli.jsonl").read_text().splitlines()]
    if not ray.is_initialized():
        ray.init(address=cluster.address)
    options = TagOptions(str(saved_model()), load={"max_length": 50}, batch_size=2)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    # one actor of one CPU: the other CPU reads the file
    tagged = ray.data.read_text(str(source), drop_empty_lines=False).map_batches(
        RayTagger,
        fn_constructor_kwargs={"options": options},
        compute=ray.data.ActorPoolStrategy(size=1),
        batch_size=4,
    )
    rows = tagged.take_all()
    assert [row["text"] for row in rows] == lines
    records = [json.loads(row["tagged"]) for row in rows]
    for record, want in zip(records, expected, strict=True):
        assert record["tags"] == want["tags"]
        assert [e["text"] for e in record["entities"]] == [e["text"] for e in want["entities"]]


def test_engine_ray_without_ray_names_the_extra_and_nothing_else_imports_ray(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("John Smith went to Paris .\n")
    code = (
        "import sys\n"
        "import ner.cli.predict, ner.corpus.run, ner.corpus.ray_tagger\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
        "sys.modules['ray'] = None\n"  # as if Ray were not installed
        "from ner.cli.predict import main\n"
        f"sys.exit(main([{str(saved_model())!r}, {str(tmp_path / 'in')!r}, '--output-dir', "
        f"{str(tmp_path / 'out')!r}, '--engine', 'ray', '--quiet', *{OPTIONS!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "ner-predict: --engine ray needs Ray: pip install 'ner-elmo[ray]' "
        "(on the driver and every node)"
    ]
