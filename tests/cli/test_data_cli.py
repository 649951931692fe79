import subprocess
import sys
from pathlib import Path

import pytest

from ner.cli.data import main


def test_prepare_column_folder_with_glove(tmp_path, isolated_data_dir, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "train.txt").write_text("Paris B-LOC\nis O\n\nnice O\n")
    (folder / "dev.txt").write_text("Rome B-LOC\nis O\n")
    (folder / "test.txt").write_text("Oslo B-LOC\nzzz O\n")
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("paris 1 2\nis 3 4\nrome 5 6\noslo 7 8\n")
    assert main(["prepare", str(folder), "--glove", str(vectors), "--tag-scheme", "bioes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["corpus", "train", "2", "3", "iob2>bioes", "0"]
    assert out[3].split() == ["corpus", "test", "1", "2", "iob2>bioes", "0"]
    # 7 tokens, 6 types; "nice" and "zzz" have no vector.
    assert out[4].endswith("(2-d) on corpus: 4 of 6 word types found; token coverage 71.43%")


def test_bad_input_exits_with_the_message(tmp_path, isolated_data_dir, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("train", "dev", "test"):
        (folder / name).write_text("a O\nb O O\n")
    assert main(["prepare", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ner-data: ") and "train:2: expected 2 columns" in err[-1]


def test_list(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.split()[0] == "conll2003"


@pytest.mark.slow
def test_the_documented_prepare_command(capsys):
    """docs/data.md's command: CoNLL-2003 with GloVe 6B.50d coverage (real data, cached)."""
    assert main(["prepare", "conll2003", "--glove"]) == 0
    out = capsys.readouterr().out
    assert "conll2003       train           14,041   203,621  iob2" in out
    assert "26,340 of 30,289 word types found; token coverage 97.67%" in out


def test_prepare_one_file_with_holdout(tmp_path, isolated_data_dir, capsys):
    path = tmp_path / "mydata.tsv"
    path.write_text("".join(f"w{i}\tB-X\n\n" for i in range(20)))
    assert main(["prepare", str(path), "--holdout", "0.1", "--holdout-seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in out[1:]] == [
        ["mydata", "train", "16"],
        ["mydata", "validation", "2"],
        ["mydata", "test", "2"],
    ]


def test_ner_data_and_its_module_spelling_list_the_corpora():
    console_script = str(Path(sys.executable).with_name("ner-data"))
    for command in ([console_script], [sys.executable, "-m", "ner.cli.data"]):
        out = subprocess.run([*command, "list"], capture_output=True, text=True, check=True).stdout
        assert "conll2003" in out, command
