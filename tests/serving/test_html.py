"""The static page of ``ner-predict --format html`` (ner/serving/html.py): whatever the texts
hold, the embedded data cannot end or change its <script> element and reads back whole."""

import json
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from ner.serving.html import html_document

OPEN = '<script type="application/json" id="ner-data">'
TRICKY = [
    "<!--<script> Rome",
    "</script><b>Paris</b>",
    "</SCRIPT > x",
    "a\u2028b\u2029c\x85d",
    "&amp; > < \\u003c",
    '"quoted" \\ back',
]


class Scripts(HTMLParser):
    """The text of every <script> element, in page order, as an HTML parser splits them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self._inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._inside = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._inside = False

    def handle_data(self, data):
        if self._inside:
            self.scripts[-1] += data


def records_of(texts: list[str]) -> list[dict]:
    return [
        {
            "text": text,
            "entities": [{"start": 0, "end": 1, "type": "PER", "text": text[:1], "confidence": 0.9}]
            if text
            else [],
        }
        for text in texts
    ]


def check_page(texts: list[str]) -> None:
    records = records_of(texts)
    page = html_document(records, ["PER"], "Entities in <b>")
    start = page.index(OPEN) + len(OPEN)
    embedded = page[start : page.index("</script>", start)]
    # Nothing in it can end the element or open a comment/script state in the HTML parser.
    assert not set(embedded) & set("<>&\u2028\u2029")
    assert json.loads(embedded) == {"kind": "spans", "labels": ["PER"], "records": records}
    parser = Scripts()
    parser.feed(page)
    assert len(parser.scripts) == 2 and parser.scripts[0] == embedded
    assert "nerRenderText" in parser.scripts[1]  # the page's own script follows intact
    assert page.rstrip().endswith("</html>")


def test_tricky_texts_read_back() -> None:
    check_page(TRICKY)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(codec="utf-8") | st.sampled_from("<>&/!-\u2028"))))
def test_any_text_reads_back(texts: list[str]) -> None:
    check_page(texts)
