"""docs/cli.md is the complete reference of the console scripts: a section for every
``[project.scripts]`` entry, every option of every argparse command in its table (and nothing the
parser lacks), each default and choice as the parser has it, and only Hydra flags that exist."""

import re

import pytest
from cli_commands import (
    ARGPARSE,
    HYDRA,
    Row,
    arguments,
    cli_sections,
    console_scripts,
    parsers,
)
from hydra._internal.utils import get_args_parser

# Defaults computed from the machine (half its cores): the table says how, not a number.
MACHINE_DEFAULTS = {("ner-predict", "--threads"), ("ner-serve", "--threads")}


def cli_parsers() -> list[tuple[str, str]]:
    """(command, section) for every argparse command and subcommand."""
    return [(command, title) for command in ARGPARSE for title in parsers(command)]


def documented(rows: list[Row]) -> set[str]:
    return {name for row in rows for name in row.names}


def test_every_console_script_is_a_known_command_with_a_section():
    scripts = console_scripts()
    assert set(scripts) == set(ARGPARSE) | set(HYDRA)
    for command, entry in scripts.items():
        assert entry == f"ner.cli.{command.removeprefix('ner-')}:main"
    assert set(scripts) <= set(cli_sections())


@pytest.mark.parametrize(("command", "title"), cli_parsers(), ids=lambda value: value)
def test_every_option_is_documented_and_every_documented_option_exists(command, title):
    section = cli_sections().get(title)
    assert section is not None, f"docs/cli.md has no section '{title}'"
    names = {name for argument in arguments(parsers(command)[title]) for name in argument.names}
    listed = documented(section.rows)
    assert not names - listed, f"{title}: not in docs/cli.md: {sorted(names - listed)}"
    assert not listed - names, f"{title}: documented but not options: {sorted(listed - names)}"


def mentions(cell: str, value: object) -> bool:
    """Whether a table cell states `value` (backticks and thousands separators dropped; an empty
    string is stated as "empty")."""
    plain = cell.replace("`", "").replace(",", "")
    if value == "":
        return plain.strip() == "empty"
    texts = {str(value)}
    if isinstance(value, float) and value.is_integer():
        texts.add(str(int(value)))
    return any(re.search(rf"(?<![\w.-]){re.escape(t)}(?![\w.-])", plain) for t in texts)


@pytest.mark.parametrize(("command", "title"), cli_parsers(), ids=lambda value: value)
def test_every_documented_default_and_choice_is_the_parsers(command, title):
    rows = {name: row for row in cli_sections()[title].rows for name in row.names}
    wrong = []
    for argument in arguments(parsers(command)[title]):
        name = argument.names[-1]
        _, kind, default, _ = rows[name].cells
        if argument.choices and not all(f"`{c}`" in kind for c in argument.choices):
            wrong.append(f"{name}: type '{kind}' does not list {argument.choices}")
        if (command, name) in MACHINE_DEFAULTS:
            if "half the cores" not in default:
                wrong.append(f"{name}: default '{default}' does not say it is half the cores")
        elif (
            isinstance(argument.default, int | float | str)
            and not argument.is_flag
            and not mentions(default, argument.default)
        ):
            wrong.append(f"{name}: default '{default}', the parser's is {argument.default!r}")
    assert not wrong, f"{title}: " + "; ".join(wrong)


def stated_default_names(help_text: str) -> set[str]:
    """The config keys and options that an argument's help names in its ``(default: ...)``."""
    stated = re.search(r"default: ([^)]*)", help_text)
    return set(re.findall(r"--[\w-]+|\b[a-z]+(?:\.[a-z_]+)+", stated[1])) if stated else set()


@pytest.mark.parametrize(("command", "title"), cli_parsers(), ids=lambda value: value)
def test_a_default_computed_at_run_time_is_documented_as_the_help_states_it(command, title):
    """An option whose default comes from elsewhere (``--max-sentences``: the run's
    ``data.max_sentences``) names in docs/cli.md the keys and options its help names."""
    rows = {name: row for row in cli_sections()[title].rows for name in row.names}
    wrong = []
    for argument in arguments(parsers(command)[title]):
        default_cell = rows[argument.names[-1]].cells[2]
        missing = stated_default_names(argument.help) - set(re.findall(r"[\w.-]+", default_cell))
        if argument.default is None and missing:
            wrong.append(f"{argument.names[-1]}: default '{default_cell}' does not name {missing}")
    assert not wrong, f"{title}: " + "; ".join(wrong)


def test_the_stated_default_names_are_read_from_the_help():
    help_text = "cap the split (default: the run's data.max_sentences; none with --corpus)"
    assert stated_default_names(help_text) == {"data.max_sentences", "--corpus"}
    assert stated_default_names("torch CPU threads (default: torch's choice)") == set()


def test_the_default_check_reads_numbers_with_separators_and_whole_words():
    assert mentions("`1,000,000`", 1_000_000) and mentions("`5`", 5.0)
    assert not mentions("`256`", 25) and not mentions("`utf-8`", "utf")


@pytest.mark.parametrize("command", sorted(HYDRA))
def test_the_hydra_flags_listed_exist(command):
    hydra_flags = {
        option for action in get_args_parser()._actions for option in action.option_strings
    }
    flags = {name for name in documented(cli_sections()[command].rows) if name.startswith("-")}
    assert flags, f"docs/cli.md lists no Hydra flag for {command}"
    assert not flags - hydra_flags, f"{command}: not Hydra flags: {sorted(flags - hydra_flags)}"
