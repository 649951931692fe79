"""The commands and config keys the README and docs/ show work with today's code.

- Every command in a code block parses: argparse commands with their parser, Hydra commands with
  Hydra's flags, and their overrides compose against the config schema and pass its range
  checks (a sweep ``a=1,2,3`` composes with its first value; ``+key`` adds a key as Hydra does;
  ``hydra.*`` overrides compose with Hydra's own config; a ``hydra.searchpath`` folder is written
  from the page's YAML blocks). A ``$ command`` block followed by output is an error example: it
  must fail with that output.
- A command shown inline (``ner-predict --format html``) uses only options that exist.
- The commands that take seconds on tiny data run: every argparse command but ``ner-evaluate``
  and ``ner-models export`` (they score a trained run on a real corpus), ``ner-curve`` (it trains
  many runs: tests/cli/test_curve.py runs a tiny one), ``ner-serve`` (it
  serves until stopped) and ``ner-predict --engine ray`` (it needs a Ray cluster: the tests
  marked ``ray`` run it on one), with the
  tiny tagger of tests/tiny_tagger.py for model folders, the tiny ELMo fixture or the shipped biLM,
  small files written in the layout the command reads, and named corpora left out (they are
  downloaded); Hydra commands that only print (``--help``, ``--cfg``) run as processes.
- Every dotted config key shown inline (``trainer.max_epochs=N``) exists in the config; with a
  concrete value it composes.
- Python signatures shown inline (``ner.x.f(a, *, b=None)``) are valid Python and match the code.
- A script of ``experiments/`` that a page runs (``python experiments/x/y.py ...``,
  ``bash experiments/x/y.sh``) exists; a Python script's arguments parse with its own parser
  (only its options, for one shown in running text).
- No documented command writes into the installed package (``ner/pretrained/``), and none edits
  a committed file in place (``--insert-into`` a file of the repository).
"""

import argparse
import ast
import contextlib
import functools
import gzip
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_commands import ARGPARSE, HYDRA, MODULES, parsers
from fixture_files import FIXTURE
from hydra import compose, initialize_config_module
from hydra._internal.utils import get_args_parser
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf
from tiny_tagger import saved_model

from ner.common.paths import PROJECT_ROOT
from ner.data.corpora import NAMED_CORPORA
from ner.pretrain.config import validate as validate_pretrain
from ner.training.config import validate as validate_train

PAGES = [
    PROJECT_ROOT / "README.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    PROJECT_ROOT / "experiments" / "README.md",
]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
SHELL_BLOCKS = {"bash", "sh", "console", "shell", "text", ""}
PROGRAMS = set(ARGPARSE) | set(HYDRA)
# A value that stands for one the reader fills in: ..., …, N, PATH, RUN_DIR, [file://DIR].
PLACEHOLDER = re.compile(r"\.\.\.|…|\b[A-Z][A-Z_]*\b")
VALIDATE = {"train": validate_train, "pretrain": validate_pretrain}
STUDY_RUNS = PROJECT_ROOT / "experiments" / "results" / "study" / "runs" / "conll2003" / "glove"


@dataclass
class Command:
    """A command shown in a page: its program, arguments and the shell around it."""

    page: str
    line: int
    text: str
    program: str
    args: list[str]
    inline: bool = False  # shown in running text, possibly without its required arguments
    stdin: str | None = None  # `cat FILE | command`
    stdin_text: str | None = None  # `echo TEXT | command`
    stdout: str | None = None  # `command > FILE`
    error: list[str] | None = None  # an error example: the output lines shown after it
    yaml_files: dict[str, str] = field(default_factory=dict)  # the page's `# path` YAML blocks

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def synopsis(self) -> bool:
        """A usage line (`[--corpus NAME]`, `best|last`, `DIR...`) rather than a command."""
        return any(
            ("=" not in arg and (arg.startswith("[") or arg.endswith("]") or "|" in arg))
            or arg.endswith("...")
            or "…" in arg
            for arg in self.args
        )


def program_of(tokens: list[str]) -> tuple[str, list[str]] | None:
    """The console script a shell segment runs and its arguments, or None: `ner-x ...`,
    `.venv/bin/ner-x ...`, `python -m ner.cli.x ...`, `torchrun ... -m ner.cli.x ...`; or the
    script of experiments/ it runs: `python experiments/x/y.py ...`, `bash experiments/x/y.sh`."""
    while tokens and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", tokens[0]):  # NAME=value prefixes
        tokens = tokens[1:]
    if not tokens:
        return None
    name = Path(tokens[0]).name
    if name in PROGRAMS:
        return name, tokens[1:]
    if name.startswith(("python", "bash")) and tokens[1:2] and is_script(tokens[1]):
        return tokens[1], tokens[2:]
    if "-m" in tokens and Path(tokens[0]).name.startswith(("python", "torchrun")):
        at = tokens.index("-m")
        if at + 1 < len(tokens) and tokens[at + 1] in MODULES:
            return MODULES[tokens[at + 1]], tokens[at + 2 :]
    return None


def is_script(path: str) -> bool:
    return path.startswith("experiments/") and path.endswith((".py", ".sh"))


def shell_commands(page: str, line: int, text: str, **extra) -> list[Command]:
    """The console-script commands of one shell line (pipes, `&&`, `>` handled)."""
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        return []
    found, stdin, stdin_text, segment = [], None, None, []
    for token in [*tokens, ";"]:
        if token not in ("|", "&&", ";", "||"):
            segment.append(token)
            continue
        stdout = None
        if ">" in segment:
            at = segment.index(">")
            stdout, segment = segment[at + 1], segment[:at]
        if segment[:1] == ["cat"] and token == "|":
            stdin = segment[1]
        elif segment[:1] == ["echo"] and token == "|":
            stdin_text = " ".join(segment[1:]) + "\n"
        elif (run := program_of(segment)) is not None:
            piped = {"stdin": stdin, "stdin_text": stdin_text, "stdout": stdout}
            found.append(Command(page, line, text, *run, **piped, **extra))
            stdin = stdin_text = None
        segment = []
    return found


def yaml_files(text: str) -> dict[str, str]:
    """YAML blocks whose leading comments name a file (`# folder/file.yaml`): the files shown."""
    files = {}
    for match in FENCE.finditer(text):
        name = re.match(r"(?:#.*\n)*?# (\S+\.yaml)\b", match[2])
        if match[1] == "yaml" and name:
            files[name[1]] = match[2]
    return files


def page_commands(path: Path) -> list[Command]:
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(PROJECT_ROOT).as_posix()
    files = yaml_files(text)
    found = []
    for match in FENCE.finditer(text):
        if match[1] not in SHELL_BLOCKS:
            continue
        first = text[: match.start(2)].count("\n") + 1
        lines = match[2].splitlines()
        index = 0
        while index < len(lines):
            line, number = lines[index], first + index
            while line.endswith("\\") and index + 1 < len(lines):
                index += 1
                line = line[:-1] + " " + lines[index].strip()
            index += 1
            if line.startswith("$ "):  # an error example: the output follows up to the next $
                output = []
                while index < len(lines) and not lines[index].startswith("$ "):
                    output.append(lines[index])
                    index += 1
                shown = [o.strip() for o in output if o.strip()]
                found += shell_commands(page, number, line[2:], error=shown, yaml_files=files)
            else:
                found += shell_commands(page, number, line, yaml_files=files)
    prose = FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)
    for number, line in enumerate(prose.splitlines(), 1):
        for span in re.findall(r"`([^`\n]+)`", line):
            found += [
                c
                for c in shell_commands(page, number, span, inline=True, yaml_files=files)
                if span.split()[0].endswith(c.program)
                or " -m " in f" {span}"
                or is_script(c.program)
            ]
    return found


ALL_COMMANDS = [command for page in PAGES for command in page_commands(page)]
COMMANDS = [command for command in ALL_COMMANDS if command.program in PROGRAMS]
SCRIPTS = [command for command in ALL_COMMANDS if is_script(command.program)]


def by_id(commands: list[Command]) -> dict:
    return {"argvalues": commands, "ids": [c.id for c in commands]}


def test_the_pages_show_commands_of_every_program():
    shown = {command.program for command in COMMANDS}
    assert shown == PROGRAMS, f"no command shown for {sorted(PROGRAMS - shown)}"
    assert len([c for c in COMMANDS if not c.inline]) >= 40


def test_the_extractor_reads_pipes_redirections_continuations_and_error_examples():
    [piped] = shell_commands("p", 1, "cat in.txt | .venv/bin/ner-predict M - > out.jsonl")
    assert (piped.program, piped.args, piped.stdin, piped.stdout) == (
        "ner-predict",
        ["M", "-"],
        "in.txt",
        "out.jsonl",
    )
    [env] = shell_commands("p", 1, "NER_X=a .venv/bin/python -m ner.cli.data list  # names")
    assert (env.program, env.args) == ("ner-data", ["list"])
    assert shell_commands("p", 1, "bash scripts/setup.sh && ner-train seed=2")[0].args == ["seed=2"]
    assert Command("p", 1, "", "ner-report", ["DIR...", "[--out", "DIR]"]).synopsis
    assert not Command("p", 1, "", "ner-train", ["data.options.columns=[a,b]"]).synopsis


# ---------------------------------------------------------------------------------------------
# Every command parses; Hydra commands compose and validate.


def hydra_overrides(args: list[str], cwd: Path) -> tuple[list[str], list[str], object]:
    """(config overrides with each sweep at its first value, hydra.* overrides, Hydra's flags)."""
    flags = get_args_parser().parse_args([a.replace("$PWD", str(cwd)) for a in args])
    config, hydra = [], []
    for override in OverridesParser.create().parse_overrides(flags.overrides):
        text = override.input_line
        if override.is_sweep_override():
            text = f"{override.get_key_element()}={next(iter(override.sweep_string_iterator()))}"
        key = override.key_or_group
        (hydra if key.startswith(("hydra.", "hydra/")) else config).append(text)
    return config, hydra, flags


def compose_and_validate(command: Command, cwd: Path) -> None:
    """Compose the command's overrides (with Hydra's config for hydra.* ones) and validate."""
    config_name = HYDRA[command.program]
    overrides, hydra, _ = hydra_overrides(command.args, cwd)
    with initialize_config_module("ner.conf", version_base="1.3"):
        if hydra:
            compose(config_name, overrides=[*hydra, *overrides], return_hydra_config=True)
        searchpath = [h for h in hydra if h.startswith("hydra.searchpath=")]
        cfg = compose(config_name, overrides=[*searchpath, *overrides])
    VALIDATE[config_name](cfg)


def error_text(error: BaseException) -> str:
    """An error's message with those of its causes, one stripped line each (as Hydra prints)."""
    parts = []
    while error is not None:
        parts.append(str(error))
        error = error.__cause__ or error.__context__
    return "\n".join(line.strip() for part in parts for line in part.splitlines())


# Files that the pages' error examples describe in a comment ("# the file holds ...").
DESCRIBED_FILES = {"broken/options.json": '{"lstm": {"dim": 64, '}


def write_yaml_files(command: Command, cwd: Path) -> None:
    for name, content in {**DESCRIBED_FILES, **command.yaml_files}.items():
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).write_text(content, encoding="utf-8")


@pytest.mark.parametrize("command", **by_id([c for c in COMMANDS if not c.inline]))
def test_every_command_in_a_code_block_parses(command: Command, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_yaml_files(command, tmp_path)
    if command.program in HYDRA:
        if command.error is not None:
            with pytest.raises(Exception) as caught:  # Hydra's errors or the schema's
                compose_and_validate(command, tmp_path)
            shown = [re.sub(r"^ner-\w+: ", "", line) for line in command.error if line != "..."]
            printed = set(error_text(caught.value).splitlines())
            missing = [line for line in shown if line not in printed]
            assert not missing, f"{command.id}: the error does not say {missing}"
        else:
            compose_and_validate(command, tmp_path)
        return
    if command.synopsis:
        check_options(command)
        return
    parser = parsers(command.program).get(
        f"{command.program} {command.args[0]}" if command.args else "", None
    )
    args = command.args[1:] if parser else command.args
    parser = parser or parsers(command.program)[command.program]
    try:
        parser.parse_args(args)
    except SystemExit as stop:
        assert stop.code == 0, f"{command.id}: {command.text}"


def check_options(command: Command) -> None:
    """Every option in the command is one of its program's (its subcommand's)."""
    if command.program in HYDRA:
        known = {o for action in get_args_parser()._actions for o in action.option_strings}
    else:
        subcommand = f"{command.program} {command.args[0]}" if command.args else ""
        found = parsers(command.program)
        parser = found.get(subcommand) or found.get(command.program) or next(iter(found.values()))
        known = {o for action in parser._actions for o in action.option_strings}
    used = {arg.strip("[]").split("=")[0] for arg in command.args if arg.strip("[").startswith("-")}
    assert used <= known, f"{command.id}: {command.text}: unknown {sorted(used - known)}"


@pytest.mark.parametrize("command", **by_id([c for c in COMMANDS if c.inline]))
def test_every_command_in_running_text_uses_existing_options(command: Command):
    check_options(command)


# ---------------------------------------------------------------------------------------------
# The quick commands run on tiny data.

TEXT = "EU rejects German call to boycott British lamb.\nPeter Smith lives in Rome.\n"
TOKENS = "Peter Smith lives in Rome .\nAnna went to Berlin .\n"
JSONL = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXT.splitlines()))
CONLL = "Peter B-PER\nSmith I-PER\nlives O\nin O\nRome B-LOC\n. O\n\nAnna B-PER\nleft O\n. O\n"
COLUMNS = ["Anna NNP B-NP B-PER", "visited VBD B-VP O", "Rome NNP B-NP B-LOC", ". . O O"]


def runnable(command: Command) -> bool:
    """Whether the command can run here in seconds (see the module docstring)."""
    if command.inline or command.synopsis or command.error is not None:
        return False
    if command.program in HYDRA:
        return any(
            a in ("--help", "-h", "--hydra-help") or a.startswith("--cfg") for a in command.args
        )
    if (
        command.program in ("ner-evaluate", "ner-serve", "ner-curve")
        and "--help" not in command.args
    ):
        return False
    if command.program == "ner-models" and command.args[:1] == ["export"]:
        return False
    if command.program == "ner-predict" and "ray" in command.args:  # --engine ray: a Ray cluster
        return False
    if command.program == "ner-data" and command.args[:1] == ["prepare"]:
        return not any(arg in NAMED_CORPORA for arg in command.args)
    return True


def write_column_file(path: Path, columns: int, sentences: int = 30) -> None:
    """A column file of `sentences` distinct sentences with the last `columns` columns."""
    blocks = []
    for index in range(sentences):
        # The token column, then the last `columns - 1` of the others.
        lines = [" ".join([line.split()[0], *line.split()[5 - columns :]]) for line in COLUMNS]
        lines[1] = lines[1].replace("visited", f"visited{index}")
        blocks.append("\n".join(lines))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


def write_input(cwd: Path, source: str, content: str) -> None:
    """An input file that `source` names: the file itself, a file in a folder (``dir/``) or
    one a glob pattern matches; gzip-compressed for a ``.gz`` name."""
    path = cwd / source.replace("*", "part-1")
    if source.endswith("/"):
        path = path / "part-1.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


# Options whose value a command writes (`--insert-into` edits the file in place).
OUTPUT_OPTIONS = ("--out", "-o", "--output", "--insert-into", "--study-json", "--scores")


def make_tiny_inputs(command: Command, cwd: Path) -> list[str]:
    """The command's arguments with model folders, biLM files and repository files resolved, and
    every input file it names written, in the layout it reads."""
    args = []
    for index, arg in enumerate(command.args):
        is_output = index > 0 and command.args[index - 1] in OUTPUT_OPTIONS
        if is_output:
            pass  # written in the temporary folder, never over a file of the repository
        elif re.fullmatch(r"(outputs/\S*/)?model|MODEL", arg):
            arg = str(saved_model())
        elif arg in ("OPTIONS", "WEIGHTS"):
            arg = str(FIXTURE / ("options.json" if arg == "OPTIONS" else "lm_weights.hdf5"))
        elif not (cwd / arg).exists() and (PROJECT_ROOT / arg).exists() and "/" in arg:
            arg = str(PROJECT_ROOT / arg)
        args.append(arg)
    program = command.program
    if program == "ner-data" and args[:1] == ["prepare"]:
        parsed = parsers(program)["ner-data prepare"].parse_args(args[1:])
        columns = len(parsed.columns or ["tokens", "tags"])
        for corpus in parsed.corpora:
            if Path(corpus).suffix:
                write_column_file(cwd / corpus, columns)
            else:
                for split in ("train", "dev", "test"):
                    write_column_file(cwd / corpus / f"{split}.txt", columns)
    elif program == "ner-predict" and "--help" not in args:
        parsed = parsers(program)[program].parse_args(args)
        content = {"text": TEXT, "tokens": TOKENS, "conll": CONLL, "jsonl": JSONL}
        for source in parsed.input:
            source = command.stdin if source == "-" else source
            if source is not None:  # else `echo TEXT |` gives the input
                write_input(cwd, source, content[parsed.input_format])
    elif program == "ner-embed" and "--help" not in args:
        (cwd / args[0]).write_text(TOKENS, encoding="utf-8")
    elif program == "ner-report" and "--help" not in args:
        folders = [a for a in parsers(program)[program].parse_args(args).dirs]
        for folder in folders:
            if not (cwd / folder).exists():
                shutil.copytree(STUDY_RUNS, cwd / folder)
    return args


def main_of(program: str):
    return importlib.import_module(f"ner.cli.{program.removeprefix('ner-')}").main


def run_in_process(command: Command, args: list[str], cwd: Path, monkeypatch) -> int:
    """Run an argparse command's main() as the shell would: stdin from `cat`, stdout to `>`."""
    if command.stdin or command.stdin_text:
        data = (
            command.stdin_text.encode()
            if command.stdin_text
            else (cwd / command.stdin).read_bytes()
        )
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            status = main_of(command.program)(args)
    except SystemExit as stop:
        status = stop.code
    if command.stdout:
        (cwd / command.stdout).write_text(out.getvalue(), encoding="utf-8")
    return status or 0


RUNNABLE = [c for c in COMMANDS if runnable(c)]
ARGPARSE_ERRORS = [c for c in COMMANDS if c.error is not None and c.program in ARGPARSE]


@pytest.mark.parametrize("command", **by_id(ARGPARSE_ERRORS))
def test_a_documented_error_is_what_the_command_prints(
    command: Command, tmp_path: Path, monkeypatch, capsys
):
    """An error example of an argparse command (`$ ner-data prepare ...` and its output) fails
    with a status of its own and prints every line shown, its `ner-x:` prefix included."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NER_DATA_DIR", str(tmp_path / "data"))
    try:
        status = main_of(command.program)(command.args)
    except SystemExit as stop:
        status = stop.code
    printed = capsys.readouterr()
    lines = {line.strip() for line in (printed.out + printed.err).splitlines()}
    missing = [line for line in command.error if line != "..." and line not in lines]
    assert status not in (0, None), f"{command.id}: {command.text} succeeded"
    assert not missing, f"{command.id}: the command does not print {missing}"


@pytest.mark.parametrize("command", **by_id([c for c in RUNNABLE if c.program in ARGPARSE]))
def test_a_documented_command_runs_on_tiny_data(command: Command, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NER_DATA_DIR", str(tmp_path / "data"))
    args = make_tiny_inputs(command, tmp_path)
    before = set(tmp_path.rglob("*"))
    assert run_in_process(command, args, tmp_path, monkeypatch) == 0, command.text
    written = {p for p in set(tmp_path.rglob("*")) - before if p.is_file()}
    outputs = [command.stdout] if command.stdout else []
    for option in ("-o", "--output", "--scores", "--out"):
        if option in args:
            outputs.append(args[args.index(option) + 1])
    if command.program == "ner-embed" and "--help" not in args:
        outputs.append(args[1])
    if command.program == "ner-report" and "--help" not in args and "--out" not in args:
        outputs.append(str(Path(args[0]) / "report.md"))  # by default into the first DIR
    for output in outputs:
        path = tmp_path / output
        assert path.exists() and (path.is_dir() or path.stat().st_size > 0), f"{output} missing"
    if command.program == "ner-data" and command.args[:1] == ["prepare"]:
        assert any("corpora" in p.parts for p in written), "no prepared corpus written"
    jsonl = [o for o in outputs if o.endswith(".jsonl")]
    spans = "label" if "doccano" in args else "entities"  # doccano's records hold "label"
    for name in jsonl:
        records = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        assert records and all(spans in record for record in records)


@pytest.mark.slow
@pytest.mark.parametrize("command", **by_id([c for c in RUNNABLE if c.program in HYDRA]))
def test_a_documented_hydra_command_that_only_prints_runs(command: Command, tmp_path: Path):
    write_yaml_files(command, tmp_path)
    args = [arg.replace("$PWD", str(tmp_path)) for arg in command.args]
    module = next(m for m, p in MODULES.items() if p == command.program)
    env = dict(os.environ, NER_DATA_DIR=str(tmp_path / "data"), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{command.text}\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), command.text
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "runs").exists()


# ---------------------------------------------------------------------------------------------
# Config keys and Python signatures shown inline.


@dataclass
class KeySpan:
    page: str
    line: int
    text: str
    config: str  # train or pretrain


def key_spans() -> list[KeySpan]:
    """Inline spans made only of overrides with at least one dotted key or config group."""
    groups = {"data", "embeddings", "elmo", "model", "trainer", "logger", "experiment"}
    groups |= {"trainer/scheduler", "hydra/launcher", "hparams_search"}
    found = []
    for path in PAGES:
        text = FENCE.sub(lambda m: "\n" * m[0].count("\n"), path.read_text(encoding="utf-8"))
        config = "pretrain" if path.name == "pretraining.md" else "train"
        for number, line in enumerate(text.splitlines(), 1):
            if heading := re.match(r"^#+ (.*)", line):
                if path.name != "pretraining.md":
                    config = "pretrain" if "pretrain" in heading[1] else "train"
                continue
            for span in re.findall(r"`([^`\n]+)`", line):
                tokens = span.split()
                keys = [t.split("=", 1)[0].lstrip("+") for t in tokens if "=" in t]
                if len(keys) != len(tokens) or not keys:
                    continue
                if all(re.fullmatch(r"[a-z_]+(\.[a-z_0-9]+)+|[a-z_/]+", k) for k in keys) and any(
                    "." in k or k in groups for k in keys
                ):
                    # `pretrain.*` keys are ner-pretrain's on any page (docs/gpu.md shows both)
                    of = "pretrain" if all(k.startswith("pretrain.") for k in keys) else config
                    found.append(
                        KeySpan(path.relative_to(PROJECT_ROOT).as_posix(), number, span, of)
                    )
    return found


KEY_SPANS = key_spans()
MISSING = object()


@functools.cache
def composed(config: str, overrides: tuple[str, ...] = ()) -> object:
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose(config, overrides=list(overrides), return_hydra_config=True)


def test_key_spans_are_found():
    texts = {span.text for span in KEY_SPANS}
    assert {"trainer.max_epochs=N", "elmo=none", "pretrain.batch_size=0"} <= texts
    assert len(KEY_SPANS) >= 40


@pytest.mark.parametrize("span", KEY_SPANS, ids=[f"{s.page}:{s.line}:{s.text}" for s in KEY_SPANS])
def test_every_documented_config_key_exists_and_composes(span: KeySpan):
    concrete, placeholders = [], []
    for token in span.text.split():
        key, value = token.split("=", 1)
        if key in ("group", "group.key", "key", "+key"):  # the syntax itself, in cli.md
            return
        (placeholders if not value or PLACEHOLDER.search(value) else concrete).append(token)
    # A launcher's keys exist once a launcher is chosen: try each one the span does not choose.
    launcher = any(t.startswith("hydra.launcher.") for t in span.text.split())
    choices = [()] if "hydra/launcher=" in span.text or not launcher else []
    choices += [(f"hydra/launcher={name}",) for name in ("local", "slurm")] if launcher else []
    # The sweeper's keys exist once a search is chosen.
    if "hydra.sweeper." in span.text and "hparams_search=" not in span.text:
        choices = [(*choice, "hparams_search=optuna") for choice in choices]
    configs, errors = [], []
    for choice in choices:
        try:
            configs.append(composed(span.config, (*choice, *concrete)))
        except Exception as error:  # Hydra's composition errors
            errors.append(f"{choice}: {error}")
    assert configs, f"{span.page}:{span.line}: {span.text} does not compose: {errors}"
    for token in placeholders:
        key = token.split("=", 1)[0]
        if "." not in key or key.startswith("+"):  # a group choice, or a key of one's own
            continue
        assert any(OmegaConf.select(c, key, default=MISSING) is not MISSING for c in configs), (
            f"{span.page}:{span.line}: {key} is not a key of {span.config}.yaml"
        )


SIGNATURE = re.compile(r"`(ner(?:\.\w+)+)\(([^`]*)\)`")


def signatures() -> list[tuple[str, str, str]]:
    return [
        (path.name, match[1], match[2])
        for path in PAGES
        for match in SIGNATURE.finditer(path.read_text(encoding="utf-8"))
    ]


@pytest.mark.parametrize(("page", "name", "params"), signatures())
def test_a_documented_signature_is_python_and_matches_the_code(page, name, params):
    module, _, attribute = name.rpartition(".")
    target = getattr(importlib.import_module(module), attribute)
    target = target.__init__ if inspect.isclass(target) else target
    real = inspect.signature(target).parameters
    shown = ast.parse(f"def f({params}): pass").body[0].args  # SyntaxError if not Python
    kinds = [(a.arg, "POSITIONAL_OR_KEYWORD") for a in shown.args]
    kinds += [(a.arg, "KEYWORD_ONLY") for a in shown.kwonlyargs]
    defaults = dict(zip([a.arg for a in shown.args][::-1], shown.defaults[::-1], strict=False))
    defaults |= {a.arg: d for a, d in zip(shown.kwonlyargs, shown.kw_defaults, strict=True) if d}
    for argument, kind in kinds:
        assert argument in real, f"{page}: {name} has no parameter {argument}"
        assert real[argument].kind.name == kind, f"{page}: {name}({argument}) is {kind}"
        if argument in defaults:
            assert ast.literal_eval(defaults[argument]) == real[argument].default, (
                f"{page}: {name}({argument}=...) differs from the code's default"
            )


# ---------------------------------------------------------------------------------------------
# Scripts of experiments/ that the pages run; where documented commands write.


class Parsed(Exception):
    """Raised in place of a script's argument parsing: carries its parser."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def parse_instead(parser: argparse.ArgumentParser, args=None, namespace=None):
    raise Parsed(parser)


def script_parser(path: Path) -> argparse.ArgumentParser | None:
    """The argparse parser a Python script of experiments/ builds in its main() (None for a
    script that reads sys.argv itself): main() runs until it parses, which raises instead."""
    if "parse_args" not in path.read_text(encoding="utf-8"):
        return None
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(path.parent))  # the scripts import their neighbours
        spec = importlib.util.spec_from_file_location(f"doc_script_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        patch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
        spec.loader.exec_module(module)
        patch.setattr(argparse.ArgumentParser, "parse_args", parse_instead)
        patch.setattr(sys, "argv", [str(path)])
        with pytest.raises(Parsed) as caught:
            module.main()
    return caught.value.parser


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option of `parser` and of its subcommands."""
    known = set()
    for action in parser._actions:
        known |= set(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            known |= {o for sub in action.choices.values() for o in option_strings(sub)}
    return known


def test_the_pages_run_scripts_of_experiments():
    shown = {command.program for command in SCRIPTS}
    assert {"experiments/pretrain/model_card.py", "experiments/bench/serve.py"} <= shown
    assert any(c.page == "experiments/README.md" for c in SCRIPTS)
    [script] = shell_commands("p", 1, ".venv/bin/python experiments/bench/predict.py --rounds 2")
    assert (script.program, script.args) == ("experiments/bench/predict.py", ["--rounds", "2"])


@pytest.mark.parametrize("command", **by_id(SCRIPTS))
def test_a_documented_script_exists_and_its_arguments_parse(command: Command, monkeypatch):
    path = PROJECT_ROOT / command.program
    assert path.is_file(), f"{command.id}: no {command.program}"
    if path.suffix != ".py":
        return
    monkeypatch.chdir(PROJECT_ROOT)  # the scripts run from the repository root
    parser = script_parser(path)
    if parser is None:
        return
    if command.inline or command.synopsis:
        used = {a.strip("[]").split("=")[0] for a in command.args if a.strip("[").startswith("-")}
        unknown = used - option_strings(parser)
        assert not unknown, f"{command.id}: {command.text}: unknown {sorted(unknown)}"
        return
    try:
        parser.parse_args(command.args)
    except SystemExit as stop:
        assert stop.code == 0, f"{command.id}: {command.text}"


def test_the_script_check_finds_a_wrong_option():
    parser = script_parser(PROJECT_ROOT / "experiments/pretrain/model_card.py")
    assert "--note" in option_strings(parser) and "--target" not in option_strings(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["RUN_DIR"])  # the output folder is required


def written_paths(command: Command) -> list[str]:
    """The paths a documented command writes to, by its output options."""
    args = command.args
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in OUTPUT_OPTIONS]


COMMITTED = set(
    subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
    ).stdout.splitlines()
)


@pytest.mark.parametrize("command", **by_id(ALL_COMMANDS))
def test_no_documented_command_writes_into_the_package_or_edits_a_committed_file(command):
    for path in written_paths(command):
        assert not path.startswith("ner/"), f"{command.id}: writes {path} in the package"
    args = command.args
    for edited in [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--insert-into"]:
        assert edited not in COMMITTED, f"{command.id}: edits the committed {edited}"


# ---------------------------------------------------------------------------------------------
# Python names and repository paths shown inline.

NAME = re.compile(r"`(ner(?:\.\w+)+)`")
REPO_PATH = re.compile(r"`((?:ner|experiments|tests|conf|scripts|hydra_plugins)/[\w./-]+)`")


def resolves(dotted: str) -> bool:
    """Whether `ner.a.b.C` names a module, or an attribute of the longest module it starts with."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def shown_names() -> list[tuple[str, str]]:
    return sorted(
        {
            (path.relative_to(PROJECT_ROOT).as_posix(), match)
            for path in PAGES
            for pattern in (NAME, REPO_PATH)
            for match in pattern.findall(path.read_text(encoding="utf-8"))
        }
    )


@pytest.mark.parametrize(("page", "shown"), shown_names())
def test_every_python_name_and_repository_path_shown_exists(page: str, shown: str):
    if shown.startswith("ner.") and "/" not in shown:
        assert resolves(shown), f"{page}: no {shown} in the package"
    else:
        assert (PROJECT_ROOT / shown).exists(), f"{page}: no {shown} in the repository"


def test_a_name_that_is_not_there_is_found():
    assert resolves("ner.bilm.bilm.BiLM") and not resolves("ner.bilm.BiLM")
