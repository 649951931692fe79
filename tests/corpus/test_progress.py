"""`ner.corpus.progress`: a tqdm bar on a terminal, plain lines otherwise, none when quiet, and
the closing summary line."""

import io

from ner.corpus import progress
from ner.corpus.progress import Progress
from ner.corpus.shards import ShardCounts


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_off_a_terminal_and_the_summary(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    stream = io.StringIO()
    shown = Progress(1000, stream=stream)
    shown.advance(500, ShardCounts(lines=10, tokens=120, entities=7, skipped=1))
    shown.advance(500)  # done before: bytes only
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("ner-predict: 50% of 0.0 MB, 10 lines, 120 tokens")
    assert "tokens/s" in lines[0] and "ETA" in lines[0] and lines[1].startswith("ner-predict: 100%")
    shown.kept = 3
    summary = shown.summary(2)
    assert summary.startswith("2 inputs, 10 lines, 120 tokens, 7 entities, 1 lines skipped in ")
    assert summary.endswith("tokens/s); 3 shards were done before and kept")


def test_a_bar_on_a_terminal_and_nothing_when_quiet(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    terminal = Terminal()
    bar = Progress(2048, stream=terminal)
    bar.advance(1024, ShardCounts(lines=4, tokens=40))
    bar.summary(1)
    assert "1.02k/2.05k" in terminal.getvalue() and "tokens/s" in terminal.getvalue()
    quiet = io.StringIO()
    Progress(10, quiet=True, stream=quiet).advance(10, ShardCounts(lines=1))
    assert quiet.getvalue() == ""
