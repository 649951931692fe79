"""A JSON file's content checked against a pydantic model: strict types, and one line that names
the file, the field by its dotted path, what it must be and what was found."""

from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from ner.common.errors import NerError
from ner.common.file_schema import STRICT, validate

PATH = Path("folder/thing.json")


class ThingError(NerError, ValueError):
    pass


class Part(BaseModel):
    model_config = STRICT

    size: Annotated[int, Field(ge=0)] = Field(0, description="a size in bytes (a whole number)")
    name: str = Field(description="a name")


class Thing(BaseModel, extra="forbid"):
    model_config = STRICT

    count: int = Field(description="a whole number")
    flag: bool = Field(False, description="true or false")
    parts: dict[str, Part] = Field({}, description="an object from names to parts")
    tags: list[str] = Field([], description="a list of strings")
    main: Part | None = Field(None, description="a part (or null)")
    label: str = ""  # no description: pydantic's words


def message(content) -> str:
    with pytest.raises(ThingError) as raised:
        validate(Thing, content, PATH, ThingError)
    return str(raised.value)


def test_valid_content_gives_the_model():
    thing = validate(Thing, {"count": 3, "parts": {"a": {"name": "x"}}}, PATH, ThingError)
    assert thing.count == 3 and thing.parts["a"].name == "x" and thing.parts["a"].size == 0


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"count": "3"}, "field 'count' must be a whole number (found '3')"),
        ({"count": True}, "field 'count' must be a whole number (found True)"),
        ({"count": 3.0}, "field 'count' must be a whole number (found 3.0)"),
        ({"count": 3, "flag": 1}, "field 'flag' must be true or false (found 1)"),
        ({}, "field 'count' must be a whole number (it is missing)"),
        ({"count": 1, "colour": 2}, "unknown key 'colour'"),
        ({"count": 1, "tags": ["a", 2]}, "field 'tags' must be a list of strings (found 2)"),
        ({"count": 1, "main": {"name": 5}}, "field 'main.name' must be a name (found 5)"),
        (
            {"count": 1, "parts": {"a": {"name": "x", "size": -1}}},
            "field 'parts.a.size' must be a size in bytes (a whole number) (found -1)",
        ),
        ({"count": 1, "parts": []}, "field 'parts' must be an object from names to parts"),
        ({"count": 1, "parts": {"a": 1}}, "field 'parts' must be an object from names to parts"),
        ({"count": 1, "label": 1}, "field 'label' is invalid: Input should be a valid string"),
        ([1], "must be a JSON object (found [1])"),
    ],
)
def test_one_line_names_the_file_and_the_field(content, expected):
    text = message(content)
    assert text.startswith(f"{PATH}: ") and "\n" not in text
    assert expected in text


def test_long_values_are_shortened():
    assert message({"count": "x" * 500}).endswith("...)")
