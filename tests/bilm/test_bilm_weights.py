"""options.json / weights.hdf5 validation, round trip, and loading from an http(s) URL."""

import json
import shutil

import h5py
import numpy as np
import pytest

from ner.bilm.bilm import BiLM
from ner.bilm.options import BiLMOptions, OptionsError
from ner.bilm.weights import WeightsError, count_parameters, expected_shapes, read_weights


@pytest.fixture
def files(fixture_dir, tmp_path):
    """Writable copies of the fixture options.json and weights.hdf5."""
    options, weights = tmp_path / "options.json", tmp_path / "weights.hdf5"
    shutil.copy(fixture_dir / "options.json", options)
    shutil.copy(fixture_dir / "lm_weights.hdf5", weights)
    options.chmod(0o644)
    weights.chmod(0o644)
    return options, weights


def test_fixture_has_exactly_the_expected_datasets(fixture_dir):
    options = BiLMOptions.from_file(fixture_dir / "options.json")
    datasets = {}

    def collect(name: str, node: object) -> None:
        if isinstance(node, h5py.Dataset):
            datasets[name] = node.shape

    with h5py.File(fixture_dir / "lm_weights.hdf5", "r") as handle:
        handle.visititems(collect)
    assert datasets == expected_shapes(options)
    assert count_parameters(options) == 105_120


def test_save_then_load_round_trips_every_dataset(fixture_dir, tmp_path):
    model = BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5")
    model.save(tmp_path / "o.json", tmp_path / "w.hdf5")
    options = BiLMOptions.from_file(tmp_path / "o.json")
    assert options.to_dict() == BiLMOptions.from_file(fixture_dir / "options.json").to_dict()
    original = read_weights(fixture_dir / "lm_weights.hdf5", options)
    written = read_weights(tmp_path / "w.hdf5", options)
    assert original.keys() == written.keys()
    for name, values in original.items():
        np.testing.assert_array_equal(written[name], values, err_msg=name)


def test_missing_dataset_is_named(files):
    options, weights = files
    with h5py.File(weights, "a") as handle:
        del handle["RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0"]
    with pytest.raises(
        WeightsError, match=r"'RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0' is missing"
    ):
        BiLM.from_files(options, weights)


def test_misshaped_dataset_is_named_with_both_shapes(files):
    options, weights = files
    with h5py.File(weights, "a") as handle:
        del handle["CNN/W_cnn_3"]
        handle["CNN/W_cnn_3"] = np.zeros((1, 4, 4, 31), dtype=np.float32)
    with pytest.raises(
        WeightsError, match=r"'CNN/W_cnn_3' has shape \(1, 4, 4, 31\), expected \(1, 4, 4, 32\)"
    ):
        BiLM.from_files(options, weights)


def test_weights_for_other_options_are_refused(files):
    options, weights = files
    content = json.loads(options.read_text())
    content["lstm"]["dim"] = 128
    options.write_text(json.dumps(content))
    with pytest.raises(WeightsError, match=r"W_0' has shape \(32, 256\), expected \(32, 512\)"):
        BiLM.from_files(options, weights)


def test_nan_weights_are_refused(files):
    options, weights = files
    with h5py.File(weights, "a") as handle:
        handle["CNN_proj/b_proj"][3] = np.nan
    with pytest.raises(WeightsError, match="'CNN_proj/b_proj' contains NaN"):
        BiLM.from_files(options, weights)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_truncated_or_corrupt_hdf5_is_reported(files, damage):
    options, weights = files
    data = weights.read_bytes()
    weights.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"\x89HDF junk" * 100, "empty": b""}[
            damage
        ]
    )
    with pytest.raises(WeightsError, match=r"weights.hdf5.*(truncated or corrupt|cannot be read)"):
        BiLM.from_files(options, weights)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda o: o["lstm"].update(use_skip_connections=False),
            "'lstm.use_skip_connections' must be true",
        ),
        (
            lambda o: o["lstm"].pop("use_skip_connections"),
            "'lstm.use_skip_connections' must be true",
        ),
        (
            lambda o: o["lstm"].pop("projection_dim"),
            r"field 'lstm.projection_dim' must be a positive integer \(it is missing\)",
        ),
        (
            lambda o: o["char_cnn"].update(activation="gelu"),
            r"'char_cnn.activation' must be one of relu, tanh .*\(found 'gelu'\)",
        ),
        (lambda o: o["char_cnn"].update(max_characters_per_token=30), "max_characters_per_token"),
        (
            lambda o: o["char_cnn"]["filters"].append([3]),
            r"'char_cnn.filters' must be .*\[width, count\] pairs.*\(found \[3\]\)",
        ),
        (
            lambda o: o["char_cnn"]["filters"].append([51, 2]),
            r"'char_cnn.filters' must be .*widths at most 50 \(found \[51, 2\]\)",
        ),
        (
            lambda o: o["lstm"].update(n_layers="2"),
            r"'lstm.n_layers' must be a positive integer \(found '2'\)",
        ),
        (
            lambda o: o["lstm"].update(use_skip_connections=1),
            "'lstm.use_skip_connections' must be true",
        ),
        (lambda o: o["lstm"].update(dim=0), "'lstm.dim' must be a positive integer"),
    ],
)
def test_bad_or_unsupported_options_name_the_key(files, edit, message):
    options, weights = files
    content = json.loads(options.read_text())
    edit(content)
    options.write_text(json.dumps(content))
    with pytest.raises(OptionsError, match=message):
        BiLM.from_files(options, weights)


def test_unreadable_options_json_names_the_file(files):
    options, weights = files
    options.write_text("{not json")
    with pytest.raises(OptionsError, match=r"options\.json: cannot read ELMo options JSON"):
        BiLM.from_files(options, weights)


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        ({"projection_dim": 512}, "projection_dim = 16, the preset expects 512"),
        ({"parameters": 13_593_296}, "parameters = 105120, the preset expects 13593296"),
        ({"hidden": 64}, "unknown expected key 'hidden'"),
    ],
)
def test_expected_shapes_of_a_preset_are_checked(fixture_dir, expected, message):
    files = fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5"
    with pytest.raises(ValueError, match=message):
        BiLM.from_files(*files, expected=expected)
    BiLM.from_files(*files, expected={"parameters": 105_120, "output_dim": 32, "lstm_dim": 64})


def test_loads_from_http_urls_once(fixture_dir, http_server, isolated_data_dir):
    shutil.copy(fixture_dir / "options.json", http_server.root / "elmo_options.json")
    shutil.copy(fixture_dir / "lm_weights.hdf5", http_server.root / "elmo_weights.hdf5")
    urls = http_server.url("elmo_options.json"), http_server.url("elmo_weights.hdf5")
    first = BiLM.from_files(*urls)
    second = BiLM.from_files(*urls)
    assert sorted(http_server.hits) == ["/elmo_options.json", "/elmo_weights.hdf5"]  # cached
    local = BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5")
    for model in (first, second):
        for name, values in local.tf_arrays().items():
            np.testing.assert_array_equal(model.tf_arrays()[name], values)
    assert list((isolated_data_dir / "downloads").iterdir())
