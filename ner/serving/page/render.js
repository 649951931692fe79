// Entity highlighting shared by the ner-serve page and `ner-predict --format html`.
// Offsets in the JSON count Unicode code points (Python's), so texts are sliced as code-point
// arrays, never as JavaScript's UTF-16 strings. Text is only ever set as textContent.
"use strict";

// Light tints of the Okabe–Ito colours, under dark text (contrast 7:1 or more). The first four
// (CoNLL's LOC, MISC, ORG, PER) stay apart in normal vision and simulated protanopia,
// deuteranopia and tritanopia (CIEDE2000 12 or more, also from the white page); all seven by 5
// or more. A corpus with more types reuses them in order. tests/serving/test_palette.py checks.
const NER_PALETTE = [
  "#bbe1f6", "#f4ec7b", "#66c5ab", "#e69e66", "#e0afca", "#eebc4d", "#80b8d8",
];

/** One colour per entity type, in the order the types are given. */
function nerColours(labels) {
  const colours = {};
  labels.forEach((label, index) => {
    colours[label] = NER_PALETTE[index % NER_PALETTE.length];
  });
  return colours;
}

/** The legend: one swatch per entity type. */
function nerLegend(labels, colours) {
  const legend = document.createElement("div");
  legend.className = "ner-legend";
  for (const label of labels) {
    const item = document.createElement("span");
    item.className = "ner-legend-item";
    item.dataset.type = label;
    item.style.background = colours[label];
    item.textContent = label;
    legend.appendChild(item);
  }
  return legend;
}

/** A document's text with each entity as a <mark>: colour of its type, label after it,
 *  type and confidence on hover. `doc` is one /predict document or ner-predict record. */
function nerRenderText(doc, colours) {
  const chars = Array.from(doc.text);
  const box = document.createElement("div");
  box.className = "ner-text";
  let at = 0;
  const entities = [...doc.entities].sort((a, b) => a.start - b.start);
  for (const entity of entities) {
    if (entity.start < at) continue; // never overlap (entities do not, but stay safe)
    box.appendChild(document.createTextNode(chars.slice(at, entity.start).join("")));
    const mark = document.createElement("mark");
    mark.className = "ner-entity";
    mark.dataset.type = entity.type;
    mark.dataset.start = entity.start;
    mark.dataset.end = entity.end;
    mark.dataset.confidence = entity.confidence;
    mark.title = `${entity.type} · confidence ${entity.confidence.toFixed(3)}`;
    mark.style.background = colours[entity.type] || "#ddd";
    mark.textContent = chars.slice(entity.start, entity.end).join("");
    const label = document.createElement("span");
    label.className = "ner-label";
    label.textContent = entity.type;
    mark.appendChild(label);
    box.appendChild(mark);
    at = entity.end;
  }
  box.appendChild(document.createTextNode(chars.slice(at).join("")));
  return box;
}

/** Per-token labels (part of speech): each token of a document with its label under it,
 *  coloured by label, the label's probability on hover; the text between tokens is kept.
 *  `doc.tokens` carry `tag` and `confidence` (a /predict document or ner-predict record). */
function nerRenderTokens(doc, colours) {
  const chars = Array.from(doc.text);
  const box = document.createElement("div");
  box.className = "ner-text ner-tokens";
  let at = 0;
  for (const token of doc.tokens || []) {
    box.appendChild(document.createTextNode(chars.slice(at, token.start).join("")));
    const item = document.createElement("span");
    item.className = "ner-token";
    item.dataset.tag = token.tag;
    item.dataset.start = token.start;
    item.dataset.end = token.end;
    item.dataset.confidence = token.confidence;
    item.title = `${token.tag} · confidence ${Number(token.confidence).toFixed(3)}`;
    const word = document.createElement("span");
    word.className = "ner-word";
    word.textContent = chars.slice(token.start, token.end).join("");
    const label = document.createElement("span");
    label.className = "ner-token-label";
    label.style.background = colours[token.tag] || "#ddd";
    label.textContent = token.tag;
    item.append(word, label);
    box.appendChild(item);
    at = token.end;
  }
  box.appendChild(document.createTextNode(chars.slice(at).join("")));
  return box;
}
