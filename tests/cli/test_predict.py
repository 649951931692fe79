"""`ner-predict` (ner/predict.py): formats, stdin, scoring and bad input, on the tiny model."""

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from tiny_tagger import corpus, one_thread, saved_model

from ner.cli.predict import main
from ner.data import tag_input

# line 4 is not UTF-8, line 5 holds NUL bytes, line 7 is a 5,000-token "sentence"
LONG_LINE = " ".join(["Rome", "and"] * 2500)
TEXT_INPUT = b"\n".join(
    [
        b"Peter Smith lives in Rome. Anna went to Berlin!",
        b"",
        "“Mary” flew to Paris, didn't she?".encode(),
        b"caf\xe9 in Rome",
        b"bin\x00ary",
        b"   ",
        LONG_LINE.encode(),
        b"John Smith went to Paris .",
    ]
)


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


def run(
    args: list[str], capsys, stdin: bytes | None = None, monkeypatch=None
) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    status = main([str(saved_model()), *args, "--threads", "1"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_text_input_to_jsonl_one_record_per_line(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT_INPUT)
    status, out, err = run([str(source)], capsys)
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    lines = TEXT_INPUT.split(b"\n")
    assert [r["line"] for r in records] == list(range(1, len(lines) + 1))
    for record, raw in zip(records, lines, strict=True):
        if "error" in record:
            continue
        text = raw.decode()
        assert record["text"] == text
        assert all(text[t["start"] : t["end"]] == t["text"] for t in record["tokens"])
        assert all(text[e["start"] : e["end"]] == e["text"] for e in record["entities"])
    assert [(e["text"], e["type"]) for e in records[0]["entities"]] == [
        ("Peter Smith", "PER"),
        ("Rome", "LOC"),
        ("Anna", "PER"),
        ("Berlin", "LOC"),
    ]
    assert records[1]["tokens"] == [] and records[5]["tokens"] == []
    assert "0xe9 at column 4 is not valid utf-8" in records[3]["error"]
    assert "NUL" in records[4]["error"]
    assert len(records[6]["tokens"]) == 5000
    assert [e["text"] for e in records[7]["entities"]] == ["John Smith", "Paris"]
    assert "line 4" in err and "line 5" in err and "2 lines skipped" in err


def test_other_encoding_reads_the_line(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.txt"
    source.write_bytes(b"caf\xe9 in Rome\n")
    status, out, _ = run([str(source), "--encoding", "latin-1"], capsys)
    assert status == 0
    assert json.loads(out)["text"] == "café in Rome"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-16-le"])
def test_utf16_and_utf32_text_input(tmp_path: Path, capsys, encoding: str) -> None:
    source = tmp_path / "in.txt"
    data = "\ufeffJohn Smith went to Paris .\r\nnaïve 東京\r\n".encode(encoding)
    # a lone surrogate on line 2 of 3: that line alone is skipped
    bad = "Rome".encode("utf-16-le") + b"\x00\xd8" + "\n".encode("utf-16-le")
    if encoding == "utf-16-le":
        data = data.replace("naïve".encode(encoding), bad[:-2], 1)
    source.write_bytes(data)
    status, out, err = run([str(source), "--encoding", encoding], capsys)
    assert status == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["text"] == "John Smith went to Paris ."
    assert [e["text"] for e in records[0]["entities"]] == ["John Smith", "Paris"]
    if encoding == "utf-16-le":
        assert records[1]["line"] == 2 and "bytes 0x00 0xd8 at character 5" in records[1]["error"]
        assert "1 lines skipped" in err
    else:
        assert records[1]["text"] == "naïve 東京"


def test_a_lone_surrogate_in_utf7_skips_its_line_alone(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.txt"
    lone = "\ud83d".encode("utf-7", "surrogatepass")  # UTF-7 decodes it without complaint
    source.write_bytes(b"John Smith went to Paris .\n" + lone + b" Rome\nAnna flew .\n")
    status, out, err = run([str(source), "--encoding", "utf-7"], capsys)
    assert status == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [e["text"] for e in records[0]["entities"]] == ["John Smith", "Paris"]
    assert records[1]["line"] == 2 and "U+D83D at character 1" in records[1]["error"]
    assert records[2]["text"] == "Anna flew ."
    assert f"{source}: line 2: U+D83D" in err and "1 lines skipped" in err


def test_a_line_too_long_to_tag_is_skipped_with_a_warning(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(tag_input, "MAX_LINE_CHARS", 100)
    source = tmp_path / "in.txt"
    source.write_text("Peter went to Rome .\n" + "Rome and " * 12 + "\nJohn Smith .\n")
    status, out, err = run([str(source)], capsys)
    assert status == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["line"] for r in records] == [1, 2, 3]
    assert "(108 characters; a line may hold 100 characters)" in records[1]["error"]
    assert [e["text"] for e in records[2]["entities"]] == ["John Smith"]
    assert f"{source}: line 2 is too long (108 characters" in err and "1 lines skipped" in err


def test_utf16_conll_input(tmp_path: Path, capsys) -> None:
    source = tmp_path / "gold.conll"
    source.write_bytes(conll_text(tagged=True).encode("utf-16"))
    status, out, err = run(
        [str(source), "--input-format", "conll", "--format", "conll", "--encoding", "utf-16"],
        capsys,
    )
    assert status == 0, err
    assert out.split("\n")[2] == "John NNP B-PER\tB-PER"
    assert "F1 100.00" in err


def test_an_encoding_that_is_no_text_encoding_is_a_usage_error(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run([str(tmp_path / "in.txt"), "--encoding", "rot13"], capsys)
    assert exit_info.value.code == 2
    assert "unknown text encoding 'rot13'" in capsys.readouterr().err


def test_html_page_of_lines_with_script_text_and_line_separators(tmp_path: Path, capsys) -> None:
    lines = ["John Smith went to Paris .", "a\u2028b <!--<script> Rome", "x\x85y\u2029 Berlin"]
    source, page = tmp_path / "in.txt", tmp_path / "page.html"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = run([str(source), "--format", "html", "-o", str(page)], capsys)
    assert status == 0, err
    html = page.read_text(encoding="utf-8")
    opening = '<script type="application/json" id="ner-data">'
    start = html.index(opening) + len(opening)
    embedded = html[start : html.index("</script>", start)]
    assert "<" not in embedded and "\u2028" not in embedded
    assert [r["text"] for r in json.loads(embedded)["records"]] == lines


def test_a_failed_run_keeps_the_existing_output_file(tmp_path: Path, capsys, monkeypatch) -> None:
    """The -o file is replaced only by a complete output: a run that fails after writing part
    of it (here the model fails on the second chunk of lines) leaves the old file as it was."""
    from ner.model.tagger import Tagger

    predict, calls = Tagger.predict, []

    def fail_on_second_chunk(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the model failed")
        return predict(self, *args, **kwargs)

    monkeypatch.setattr(Tagger, "predict", fail_on_second_chunk)
    source, output = tmp_path / "in.txt", tmp_path / "out.jsonl"
    source.write_text("John Smith went to Paris .\nAnna likes Rome .\n", encoding="utf-8")
    for form in ("jsonl", "html"):
        output.write_text("the previous report\n", encoding="utf-8")
        calls.clear()
        args = [str(source), "--format", form, "--chunk-lines", "1", "-o", str(output)]
        with pytest.raises(RuntimeError, match="the model failed"):
            run(args, capsys)
        assert output.read_text(encoding="utf-8") == "the previous report\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.jsonl"]
    monkeypatch.setattr(Tagger, "predict", predict)
    status, _, _ = run([str(source), "-o", str(output)], capsys)
    assert status == 0
    assert [json.loads(line)["line"] for line in output.read_text().splitlines()] == [1, 2]


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_stdin_tokens_to_conll(capsys, monkeypatch, precision: str) -> None:
    stdin = b"John Smith went to Paris .\n\nAnna likes Rome .\n"
    args = ["-", "--input-format", "tokens", "--format", "conll", "--precision", precision]
    status, out, _ = run(args, capsys, stdin, monkeypatch)
    assert status == 0
    assert out == (
        "John\tB-PER\nSmith\tI-PER\nwent\tO\nto\tO\nParis\tB-LOC\n.\tO\n\n"
        "Anna\tB-PER\nlikes\tO\nRome\tB-LOC\n.\tO\n\n"
    )


def test_tag_scheme_option(capsys, monkeypatch) -> None:
    status, out, _ = run(
        ["-", "--input-format", "tokens", "--format", "conll", "--tag-scheme", "bioes"],
        capsys,
        b"John Smith went to Paris .\n",
        monkeypatch,
    )
    assert status == 0
    assert [line.split("\t")[1] for line in out.split("\n") if line] == [
        "B-PER",
        "E-PER",
        "O",
        "O",
        "S-LOC",
        "O",
    ]


def conll_text(tagged: bool) -> str:
    blocks = ["-DOCSTART- -X- O\n"]
    for tokens, tags in corpus():
        blocks.append(
            "".join(
                f"{t} NNP {g}\n" if tagged else f"{t}\n" for t, g in zip(tokens, tags, strict=True)
            )
        )
    return "\n".join(blocks)


def test_conll_input_is_scored(tmp_path: Path, capsys) -> None:
    source, scores = tmp_path / "gold.conll", tmp_path / "scores.json"
    source.write_text(conll_text(tagged=True))
    status, out, err = run(
        [str(source), "--input-format", "conll", "--format", "conll", "--scores", str(scores)],
        capsys,
    )
    assert status == 0
    lines = out.split("\n")
    assert lines[0] == "-DOCSTART- -X- O"
    assert lines[2] == "John NNP B-PER\tB-PER"  # input line + prediction in the gold's scheme
    result = json.loads(scores.read_text())
    assert result["f1"] == 100.0 and result["strict"]["f1"] == 100.0  # it memorised these
    assert result["sentences"] == len(corpus()) and result["scheme"] == "iob2"
    assert "F1 100.00" in err


def test_untagged_conll_input_to_jsonl(tmp_path: Path, capsys) -> None:
    source = tmp_path / "plain.conll"
    source.write_text(conll_text(tagged=False))
    status, out, err = run([str(source), "--input-format", "conll"], capsys)
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == len(corpus())
    assert records[0]["text"] == "John Smith lives in Paris ."
    assert records[0]["gold_tags"] is None and records[0]["line"] == 3
    assert "scored" not in err


def test_conll_whose_last_column_is_not_ner_tags_is_tagged_unscored(tmp_path: Path, capsys) -> None:
    source = tmp_path / "pos.conll"  # token POS: the last column is a part-of-speech tag
    source.write_text(
        "\n".join("".join(f"{t} NNP\n" for t in tokens) for tokens, _ in corpus()),
        encoding="utf-8",
    )
    status, out, err = run([str(source), "--input-format", "conll", "--format", "conll"], capsys)
    assert status == 0, err
    blocks = out.strip("\n").split("\n\n")
    assert len(blocks) == len(corpus())
    assert blocks[0].split("\n")[0] == "John NNP\tB-PER"
    assert "not NER tags" in err and "line 1" in err and "'NNP'" in err
    assert "scored" not in err


def test_conll_sentence_with_bad_bytes_is_skipped_alone(tmp_path: Path, capsys) -> None:
    source = tmp_path / "bad.conll"
    source.write_bytes(b"Anna B-PER\nin\xff O\n\nJohn B-PER\nSmith I-PER\n")
    status, out, err = run([str(source), "--input-format", "conll"], capsys)
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert "error" in records[0] and "line 2" in records[0]["error"]
    assert records[1]["text"] == "John Smith"
    assert "1 sentences skipped" in err


def test_model_of_another_version_is_a_clear_error(tmp_path: Path, capsys) -> None:
    model = Path(shutil.copytree(saved_model(), tmp_path / "model"))
    manifest = json.loads((model / "archive.json").read_text())
    manifest["format_version"] = 0
    (model / "archive.json").write_text(json.dumps(manifest))
    source = tmp_path / "in.txt"
    source.write_text("Rome\n")
    status = main([str(model), str(source)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"ner-predict: {model}") and "format version 0" in err


def test_missing_input_and_bad_options(tmp_path: Path, capsys) -> None:
    status, _, err = run([str(tmp_path / "missing.txt")], capsys)
    assert status == 2 and err.strip().splitlines() == [
        f"ner-predict: {tmp_path / 'missing.txt'}: No such file or directory"
    ]
    source = tmp_path / "in.txt"
    source.write_text("Rome\n")
    status, _, err = run([str(source), "-o", str(source / "out.jsonl")], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"ner-predict: {source / 'out.jsonl'}: ")
    status, _, err = run([str(source), "-o", str(tmp_path)], capsys)  # before: a traceback
    assert (status, err) == (2, f"ner-predict: {tmp_path}: Is a directory\n")
    with pytest.raises(SystemExit) as exit_info:
        run([str(tmp_path), "--batch-size", "0"], capsys)
    assert exit_info.value.code == 2
    assert "argument --batch-size: must be positive, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        run([str(tmp_path), "--precision", "float16"], capsys)
    assert exit_info.value.code == 2
    assert "invalid choice: 'float16'" in capsys.readouterr().err


def test_rank_uncertainty_orders_by_score_with_a_budget(tmp_path: Path, capsys) -> None:
    lines = ["Anna likes Rome .", "It rained on Monday .", "Anna likes Rome .", "Smith met Peter"]
    source = tmp_path / "pool.txt"
    source.write_text("\n".join(lines) + "\n")
    status, out, err = run(
        [str(source), "--input-format", "tokens", "--rank", "uncertainty"], capsys
    )
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and "ranked 4 lines by uncertainty, wrote 4" in err
    scores = [record["uncertainty"] for record in records]
    assert scores == sorted(scores, reverse=True)
    for record in records:  # the score is 1 - the least sure decision, no more sure than any entity
        assert all(
            record["uncertainty"] >= round(1 - e["confidence"], 6) - 1e-6
            for e in record["entities"]
        )
        assert record["text"] == lines[record["line"] - 1]
    copies = [record["line"] for record in records if record["text"] == lines[0]]
    assert copies == [1, 3]  # a tie: input order
    status, out, _ = run(
        [str(source), "--input-format", "tokens", "--rank", "uncertainty", "--budget", "2"], capsys
    )
    assert [json.loads(line) for line in out.splitlines()] == records[:2]
    status, out, _ = run(
        [str(source), "--input-format", "tokens", "--rank", "uncertainty", "--distinct"], capsys
    )
    kept = [json.loads(line)["line"] for line in out.splitlines()]
    assert kept == [record["line"] for record in records if record["line"] != 3]


def test_rank_refuses_what_it_cannot_do(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.txt"
    source.write_text("Rome\n")
    for options, message in [
        (["--budget", "3"], "--budget and --distinct go with --rank"),
        (["--distinct"], "--budget and --distinct go with --rank"),
        (["--rank", "uncertainty", "--format", "conll"], "--rank writes jsonl"),
        (["--rank", "uncertainty", "--input-format", "conll"], "--rank takes text, tokens, jsonl"),
        (["--rank", "uncertainty", "--output-dir", str(tmp_path / "out")], "one ranked file"),
    ]:
        status, out, err = run([str(source), *options], capsys)
        assert (status, out) == (2, "") and len(err.strip().splitlines()) == 1, options
        assert message in err, err
    with pytest.raises(SystemExit) as exit_info:
        run([str(source), "--rank", "uncertainty", "--budget", "0"], capsys)
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        run([str(source), "--rank", "entropy"], capsys)
    assert exit_info.value.code == 2
    assert "invalid choice: 'entropy'" in capsys.readouterr().err


def test_rank_refuses_a_jsonl_field_named_like_the_score(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Anna likes Rome.", "uncertainty": 1}\n{"text": "Rome", "id": 2}\n')
    status, out, err = run(
        [str(source), "--input-format", "jsonl", "--rank", "uncertainty"], capsys
    )
    assert status == 0 and "line 1: its field 'uncertainty'" in err
    assert [(r["line"], r["id"]) for r in map(json.loads, out.splitlines())] == [(2, 2)]
