"""File names made from text that a file or a user supplied (a corpus name in a ``results.json``,
a metric name): such text becomes a file name only through `file_inside`, which keeps the file
in the folder it is written to, whatever the text holds (``../``, ``/``, a leading dot)."""

import hashlib
import re
from pathlib import Path

_PLAIN = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_file_name(text: str) -> str:
    """`text` as one plain file name: unchanged when it already is one (letters, digits and
    ``._+-``, no leading dot), else with each run of other characters replaced by ``_``, leading
    dots dropped, and the first 8 hex digits of its sha256 appended, so that two different texts
    never share a name."""
    if _PLAIN.fullmatch(text):
        return text
    cleaned = _UNSAFE.sub("_", text).lstrip(".")[:80]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}" if cleaned else digest


def file_inside(folder: Path, stem: str, suffix: str = "") -> Path:
    """The file ``<stem><suffix>`` directly inside `folder`, `stem` made safe (`safe_file_name`);
    `suffix` is the caller's own (``.png``, ``.json``)."""
    return Path(folder) / f"{safe_file_name(stem)}{suffix}"
