"""A tagged document as one self-contained HTML file (``ner-predict --format html``): the same
highlighting as the `ner-serve` page (its render.js and style.css, inlined), with the records
embedded as JSON, so the file opens offline in any browser. Per-token labels (part of speech) are
shown under their tokens instead of highlighted spans."""

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ner.data.labels import TOKENS
from ner.data.tag_schemes import split_tag
from ner.model.results import TaggedText
from ner.model.tagger import Tagger

PAGE = Path(__file__).with_name("page")

_BOOT = """
const data = JSON.parse(document.getElementById("ner-data").textContent);
const colours = nerColours(data.labels);
document.getElementById("legend").replaceChildren(nerLegend(data.labels, colours));
const documents = document.getElementById("documents");
for (const record of data.records) {
  const box = document.createElement("div");
  box.className = "ner-doc";
  box.appendChild(
    data.kind === "tokens" ? nerRenderTokens(record, colours) : nerRenderText(record, colours)
  );
  documents.appendChild(box);
}
"""


# Characters that JSON may hold as they are but a <script> element may not: "<" starts "</script>"
# and "<!--<script", which ends the element early or makes the parser swallow the rest of the
# page; ">" and "&" for good measure; U+2028 and U+2029 end a line in older JavaScript.
_SCRIPT_UNSAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})


def _script_json(value: Any) -> str:
    """`value` as JSON that is safe inside any <script> element: the characters that could end
    or change it are written as ``\\u`` escapes, which every JSON and JavaScript parser reads
    back as the same characters."""
    return json.dumps(value, ensure_ascii=False).translate(_SCRIPT_UNSAFE)


def html_document(
    records: Iterable[dict[str, Any]], labels: list[str], title: str, kind: str = "spans"
) -> str:
    """The HTML page of `records` (`TaggedText.to_json` objects, embedded as they are: text and
    entities with character offsets); `labels`: the entity types, in legend order; `kind`
    ``tokens``: per-token labels, read from the records' tokens (``tag``, ``confidence``) and
    shown under each token."""
    data = {"kind": kind, "labels": labels, "records": list(records)}
    style = (PAGE / "style.css").read_text(encoding="utf-8")
    script = (PAGE / "render.js").read_text(encoding="utf-8")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
{style}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<div id="legend"></div>
<div id="documents"></div>
<script type="application/json" id="ner-data">{_script_json(data)}</script>
<script>
{script}{_BOOT}</script>
</body>
</html>
"""


def tagger_page(tagger: Tagger, results: Iterable[TaggedText], source: str) -> str:
    """The page of a tagger's results, each as its one JSON shape (`TaggedText.to_json`, the
    object of a jsonl line and of a /predict document). `source`: what was tagged, for the
    title."""
    kept = [result.to_json() for result in results]
    if tagger.labels == TOKENS:
        return html_document(kept, list(tagger.model.tags), f"Labels of {source}", "tokens")
    labels = sorted({split_tag(tag)[1] for tag in tagger.model.tags if tag != "O"})
    return html_document(kept, labels, f"Entities in {source}")
