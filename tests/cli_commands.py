"""The console scripts as the docs tests see them: every ``[project.scripts]`` entry, the argparse
parser of each argparse command, the config of each Hydra command, and docs/cli.md's sections."""

import argparse
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field

from ner.cli import curve, data, embed, evaluate, models, predict, report, serve
from ner.common.paths import PROJECT_ROOT

CLI_PAGE = PROJECT_ROOT / "docs" / "cli.md"

# Command → its argparse parser (commands with subcommands: the parser that holds them).
ARGPARSE: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "ner-curve": curve.build_parser,
    "ner-data": data._parser,
    "ner-embed": embed.build_parser,
    "ner-evaluate": evaluate.build_parser,
    "ner-models": models.build_parser,
    "ner-predict": predict.parser,
    "ner-report": report.build_parser,
    "ner-serve": serve.parser,
}
# Hydra command → its config in ner.conf.
HYDRA = {"ner-train": "train", "ner-pretrain": "pretrain"}
# `python -m` spellings of the commands.
MODULES = {f"ner.cli.{name.removeprefix('ner-')}": name for name in [*ARGPARSE, *HYDRA]}


def console_scripts() -> dict[str, str]:
    """``[project.scripts]`` of pyproject.toml: command → entry point."""
    with (PROJECT_ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]["scripts"]


@dataclass
class Argument:
    """One option or positional argument as the parser defines it."""

    names: list[str]  # option strings, or the positional's documented name (MODEL, RUN_DIR)
    default: object
    choices: list[str] | None
    is_flag: bool  # store_true: no value
    help: str = ""


def parsers(command: str) -> dict[str, argparse.ArgumentParser]:
    """The parser of `command`, or one per subcommand (``ner-data list``, ``ner-data prepare``)."""
    parser = ARGPARSE[command]()
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found |= {f"{command} {name}": sub for name, sub in action.choices.items()}
    return found or {command: parser}


def arguments(parser: argparse.ArgumentParser) -> list[Argument]:
    """Every argument of `parser` but -h/--help."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        names = list(action.option_strings) or [action.metavar or action.dest.upper()]
        choices = [str(choice) for choice in action.choices] if action.choices else None
        flag = isinstance(action, argparse._StoreTrueAction)
        found.append(Argument(names, action.default, choices, flag, action.help or ""))
    return found


@dataclass
class Row:
    """A row of an argument table in docs/cli.md: the names in its first cell and its cells."""

    names: list[str]
    cells: list[str]


@dataclass
class Section:
    title: str
    text: str
    rows: list[Row] = field(default_factory=list)


def first_word(code: str) -> str:
    """`--cfg job` → --cfg; `resume=RUN_DIR` → resume; `hydra/launcher=local` → hydra/launcher."""
    return re.split(r"[\s=]", code.strip(), maxsplit=1)[0]


def cli_sections() -> dict[str, Section]:
    """docs/cli.md's sections by heading (``ner-predict``, ``ner-data prepare``), each with the
    rows of its argument table."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    sections: dict[str, Section] = {}
    current = None
    for line in text.splitlines():
        heading = re.match(r"^#{2,3} (.+)$", line)
        if heading:
            current = sections.setdefault(heading[1], Section(heading[1], ""))
            continue
        if current is None:
            continue
        current.text += line + "\n"
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            names = [first_word(code) for code in re.findall(r"`([^`]+)`", cells[0])]
            if names and cells[1] != "type":
                current.rows.append(Row(names, cells))
    return sections
