"""The README and docs/ pages: every relative link resolves, the README stays a front page, and
its Python example runs as written."""

import re
import subprocess
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
PAGES = [
    README,
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    PROJECT_ROOT / "experiments" / "README.md",
    *sorted((PROJECT_ROOT / "experiments" / "results").rglob("*.md")),
]
# [text](target) with an optional "title"; images too. Code spans are removed first.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def relative_links(page: Path) -> list[str]:
    """The link targets of a Markdown page that are not URLs: files, files#anchor and #anchor."""
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    targets = [match.group(1) for match in LINK.finditer(text)]
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a page: lowercased, punctuation dropped, spaces → hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    headings = re.findall(r"^#+\s+(.*)$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_link_parser_finds_relative_links_and_skips_urls_and_code(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        '[a](docs/a.md) ![plot](p.png "t") [web](https://x.org/y) [top](#top) `[no](c.md)`\n'
        "```\n[no](d.md)\n```\n[b](b.md#part)\n"
    )
    assert relative_links(page) == ["docs/a.md", "p.png", "#top", "b.md#part"]


def test_anchors_follow_github_rules(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Resume and re-evaluate\n## The biLM feature cache\n## ner-embed\n")
    assert anchors(page) == {"resume-and-re-evaluate", "the-bilm-feature-cache", "ner-embed"}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(PROJECT_ROOT).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading '{anchor}' in {resolved.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail into docs/"
    quick_start = "\n".join(lines[: lines.index("## The main job")])
    assert "bash scripts/setup.sh && .venv/bin/ner-train experiment=conll2003_elmo_glove" in (
        quick_start
    )
    assert "bash scripts/test.sh" in quick_start


@pytest.mark.slow
def test_the_readme_python_example_runs_as_written(capsys):
    """With the shipped tagger it names (its first load fetches GloVe 6B.50d, 76 MB)."""
    text = README.read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len([line for line in example.splitlines() if line.strip()]) == 3  # code lines
    assert 'Tagger.load("conll2003")' in example and "hydra.run.dir=outputs/main_job" in text
    exec(example, {})
    printed = capsys.readouterr().out
    assert "Entity(text='EU', type='ORG'" in printed and "type='MISC'" in printed


def test_the_experiments_index_names_every_script():
    folder = PROJECT_ROOT / "experiments"
    index = (folder / "README.md").read_text(encoding="utf-8")
    scripts = [
        path.relative_to(folder).as_posix()
        for path in sorted(folder.glob("*/*"))
        if path.suffix in (".py", ".sh")
    ]
    assert scripts, "no scripts found under experiments/"
    missing = [script for script in scripts if f"`{script}" not in index]
    assert not missing, f"experiments/README.md does not index {missing}"
    assert not list(folder.glob("*.py")) + list(folder.glob("*.sh")), "scripts belong in a folder"


# What no tracked file may say: a path of the machine it was written on, a spec users do not
# have, or the project's own issue tracker (patterns split so this file does not match itself).
FORBIDDEN = re.compile(r"/(?:work|root|home)/|ELMO" r"_SPEC|\bissue [0-9]|\bthe\s+issue\b")


def test_no_tracked_file_names_a_machine_path_a_private_spec_or_an_issue():
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in listed.stdout.decode().split("\0"):
        path = PROJECT_ROOT / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if FORBIDDEN.search(line):
                found.append(f"{name}:{number}: {line.strip()[:80]}")
    assert not found, "\n".join(found)
