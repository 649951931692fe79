"""`ner-embed`: HDF5 layout, state modes, streaming in chunks, errors."""

import json

import h5py
import numpy as np
import pytest
import torch
from fixture_files import zip_of

from ner.bilm.bilm import BiLM
from ner.cli.embed import main
from ner.features.hdf5 import embed_file


def write_lines(path, sentences):
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    return path


def model_args(fixture_dir):
    return [
        "--options-file",
        str(fixture_dir / "options.json"),
        "--weight-file",
        str(fixture_dir / "lm_weights.hdf5"),
    ]


def test_cli_writes_one_dataset_per_line_and_the_sentence_index(
    fixture_dir, sentences, tmp_path, capsys
):
    source, target = write_lines(tmp_path / "in.txt", sentences), tmp_path / "out.hdf5"
    assert main([str(source), str(target), *model_args(fixture_dir), "--batch-size", "2"]) == 0
    assert "line" in capsys.readouterr().err  # progress bar
    model = BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5")
    expected = model.embed_sentences(sentences)
    with h5py.File(target, "r") as handle:
        assert sorted(handle) == sorted([*map(str, range(len(sentences))), "sentence_to_index"])
        for index, sentence in enumerate(sentences):
            data = handle[str(index)]
            assert data.dtype == np.float32 and data.shape == (3, len(sentence), 32)
            np.testing.assert_allclose(data[...], expected[index].numpy(), atol=1e-5, rtol=0)
        index = json.loads(handle["sentence_to_index"][0])
    assert all(index[" ".join(s)] == str(i) for i, s in enumerate(sentences))
    assert not list(tmp_path.glob("*.partial"))


def test_stateful_cli_reproduces_the_fixture_stream(fixture_dir, fixture_sentences, tmp_path):
    """bilm-tf's dump procedure: one line at a time, state carried → lm_embeddings_0 (≤ 2e-6)."""
    source = write_lines(tmp_path / "in.txt", fixture_sentences[0])
    target = tmp_path / "out.hdf5"
    arguments = [str(source), str(target), *model_args(fixture_dir), "--state", "stateful"]
    main([*arguments, "--batch-size", "1", "--no-progress"])
    with h5py.File(target, "r") as out, h5py.File(fixture_dir / "lm_embeddings_0.hdf5") as gold:
        for index in range(10):
            expected = np.concatenate(list(gold[str(index)][...]), axis=-1)
            assert np.abs(out[str(index)][2] - expected).max() <= 2e-6


@pytest.mark.parametrize(("state", "batch_size"), [("warm", 64), ("stateful", 2)])
def test_streaming_in_small_chunks_gives_the_same_file(
    fixture_dir, sentences, tmp_path, state, batch_size
):
    model = BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state)
    source = write_lines(tmp_path / "in.txt", sentences * 2)
    outputs, calls = [], []
    embed_sentences = model.embed_sentences
    model.embed_sentences = lambda chunk, *a, **k: (
        calls.append(len(chunk)) or embed_sentences(chunk, *a, **k)
    )
    for chunk_lines in (3, 8192):
        model.reset_states()
        target = tmp_path / f"{chunk_lines}.hdf5"
        written = embed_file(
            model, source, target, batch_size, chunk_lines=chunk_lines, progress=False
        )
        assert written == 12
        with h5py.File(target, "r") as handle:
            outputs.append([handle[str(i)][...] for i in range(written)])
    # Chunks of 3 lines (rounded to whole batches when stateful), then the whole file at once.
    assert calls == ([3, 3, 3, 3] if state == "warm" else [2, 2, 2, 2, 2, 2]) + [12]
    for small, whole in zip(*outputs, strict=True):
        np.testing.assert_allclose(small, whole, atol=1e-6, rtol=0)


def test_empty_lines_give_empty_datasets(fixture_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b\n\n   \nc", encoding="utf-8")
    target = tmp_path / "out.hdf5"
    main([str(source), str(target), *model_args(fixture_dir), "--no-progress"])
    with h5py.File(target, "r") as handle:
        assert [handle[str(i)].shape for i in range(4)] == [
            (3, 2, 32),
            (3, 0, 32),
            (3, 0, 32),
            (3, 1, 32),
        ]


def test_bad_input_and_bad_weights_give_one_line_errors(fixture_dir, tmp_path, capsys):
    def error(*arguments: str) -> str:
        assert main([*arguments, "--no-progress"]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ner-embed: "), lines
        return lines[0]

    source = tmp_path / "in.txt"
    source.write_bytes(b"fine line\nbad \xff byte\n")
    assert "in.txt:2: not valid UTF-8" in error(
        str(source), str(tmp_path / "o.hdf5"), *model_args(fixture_dir)
    )
    assert not (tmp_path / "o.hdf5").exists()
    broken = tmp_path / "w.hdf5"
    broken.write_bytes(b"not hdf5")
    arguments = ["--options-file", str(fixture_dir / "options.json"), "--weight-file", str(broken)]
    assert "w.hdf5: not a readable HDF5 weights file" in error(
        str(source), str(tmp_path / "o.hdf5"), *arguments
    )
    missing = tmp_path / "missing.txt"
    assert f"input file not found: {missing}" in error(
        str(missing), str(tmp_path / "o.hdf5"), *model_args(fixture_dir)
    )
    source.write_text("fine line\n")  # an output that is a folder: before, a traceback
    assert error(str(source), str(tmp_path), *model_args(fixture_dir)) == (
        f"ner-embed: {tmp_path}: Is a directory"
    )


def test_token_cache_is_reused_across_calls(fixture_dir, sentences):
    model = BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5")
    cache: dict[str, torch.Tensor] = {}
    first = model.embed_sentences(sentences, token_cache=cache)
    assert set(cache) == {t for s in sentences for t in s}
    cached = dict(cache)
    second = model.embed_sentences(sentences, token_cache=cache)
    assert all(cache[t] is cached[t] for t in cached)
    for a, b in zip(first, second, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("zipped", [False, True])
def test_model_folder_of_elmoformanylangs_writes_the_package_layers(
    fixture_dir, tmp_path, isolated_data_dir, zipped
):
    """`--model DIR` (or a zip of it) detects the format; stateless reproduces the package's
    Embedder (1e-5)."""
    folder = fixture_dir.parent / "efml" / "word_char"
    sentences = json.loads((folder.parent / "sentences.json").read_text(encoding="utf-8"))
    source, target = write_lines(tmp_path / "in.txt", sentences), tmp_path / "out.hdf5"
    model = zip_of(folder, tmp_path / "word_char.zip") if zipped else folder
    args = [str(source), str(target), "--model", str(model), "--state", "stateless"]
    assert main([*args, "--no-progress"]) == 0
    expected = np.load(folder / "layers.npy")
    with h5py.File(target, "r") as handle:
        written = np.concatenate([handle[str(i)][...] for i in range(len(sentences))], axis=1)
    assert np.abs(written - expected).max() <= 1e-5


def test_model_and_the_two_files_exclude_each_other(fixture_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.txt", [["a"]])
    with pytest.raises(SystemExit):
        main([str(source), str(tmp_path / "out.hdf5")])
    assert "give either --model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [
                str(source),
                str(tmp_path / "o.hdf5"),
                "--model",
                str(fixture_dir),
                "--options-file",
                "x",
            ]
        )
    assert "--model replaces" in capsys.readouterr().err
