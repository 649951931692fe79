"""Text from files becomes a file name only through `ner.common.file_names`: plain names stay as
they are, anything else stays inside the folder and never collides with another name."""

from pathlib import Path

import pytest

from ner.common.file_names import file_inside, safe_file_name


@pytest.mark.parametrize("name", ["conll2003", "conll2000-pos", "ud_en-first100-train0.25", "a+b"])
def test_plain_names_are_kept(name: str) -> None:
    assert safe_file_name(name) == name


@pytest.mark.parametrize(
    "text", ["../../x", "/etc/passwd", "..", ".", ".hidden", "a/b", "a\\b", "", "é t\x00"]
)
def test_any_other_text_stays_inside_the_folder(text: str, tmp_path: Path) -> None:
    path = file_inside(tmp_path, text, ".png")
    assert path.parent == tmp_path and path.name.endswith(".png")
    assert not path.name.startswith(".") and "/" not in path.name and "\\" not in path.name


def test_names_made_safe_do_not_collide() -> None:
    assert safe_file_name("a/b") != safe_file_name("a_b") != safe_file_name("a:b")
    assert safe_file_name("a/b") != safe_file_name("a:b")
