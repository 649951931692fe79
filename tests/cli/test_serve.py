"""`ner-serve` refuses bad options, an address it cannot listen on and a bad model directory
with one line each, binds its port before the model loads, and limits oneDNN's kernel cache
before the model loads."""

import os
import socket
from pathlib import Path

import pytest

from ner.cli import serve
from ner.cli.serve import main
from ner.common.memory import KERNEL_CACHE_VARIABLES
from ner.serving.settings import server_settings


@pytest.mark.parametrize(
    "option", ["--workers=0", "--max-texts=0", "--timeout=0", "--batch-wait-ms=-1"]
)
def test_bad_options(tmp_path: Path, capsys, option: str) -> None:
    assert main([str(tmp_path), option]) == 2
    name = option.split("=")[0]
    assert capsys.readouterr().err.startswith(f"ner-serve: {name} must")


def test_threads_are_checked_as_ner_predict_checks_them(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path), "--threads=0"])
    assert stopped.value.code == 2
    assert "argument --threads: must be positive, got 0" in capsys.readouterr().err


def test_missing_model_directory_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "nothing"), "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"ner-serve: model folder {tmp_path / 'nothing'} does not exist")


def test_missing_model_is_refused_before_starting_workers(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path), "--workers", "2", "--port", "0"]) == 2
    assert "has no archive.json" in capsys.readouterr().err


def test_precision_reaches_the_tagger_settings(tmp_path: Path) -> None:
    def settings(*arguments: str) -> dict:
        return server_settings(vars(serve.parser().parse_args([str(tmp_path), *arguments])))

    assert settings("--precision", "bfloat16")["tagger"]["precision"] == "bfloat16"
    assert settings()["tagger"]["precision"] == "float32"


def test_kernel_cache_is_limited_before_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KERNEL_CACHE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert main([str(tmp_path), "--port", "0"]) == 2  # fails while loading
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == "128"


def one_line_error(capsys, *arguments: str) -> str:
    """The one line `ner-serve ARGUMENTS` prints on stderr when it stops with status 2."""
    assert main(list(arguments)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--port", "99999"], "ner-serve: --port must be 0 to 65535, got 99999"),
        (["--port", "-1"], "ner-serve: --port must be 0 to 65535, got -1"),
        (["--host", "nowhere.invalid"], "ner-serve: cannot listen on --host nowhere.invalid"),
        (["--trusted-proxy", "proxy"], "ner-serve: --trusted-proxy: 'proxy' is not an IP"),
    ],
)
def test_an_address_it_cannot_use_is_one_line(
    tmp_path: Path, capsys, arguments: list[str], message: str
) -> None:
    """Before: a 72-line traceback (a port out of range) or six lines of uvicorn's log."""
    assert one_line_error(capsys, str(tmp_path), *arguments).startswith(message)


def test_a_port_in_use_is_one_line_before_the_model_loads(tmp_path: Path, capsys) -> None:
    """The model folder is empty: the port is refused first, so a busy port costs no load."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        error = one_line_error(capsys, str(tmp_path), "--port", port)
    assert error == (
        f"ner-serve: cannot listen on --host 127.0.0.1 --port {port}: Address already in use"
    )
