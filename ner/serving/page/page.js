// The ner-serve page: asks /info for the entity types, posts the text to /predict and shows
// the highlighted entities, the legend and the JSON answer.
"use strict";

let colours = {};

async function describeModel() {
  const response = await fetch("info");
  const info = await response.json();
  colours = nerColours(info.labels);
  document.getElementById("legend").replaceChildren(nerLegend(info.labels, colours));
  const scores = info.test_f1 === null ? "" : ` · test F1 ${info.test_f1.toFixed(2)}`;
  const bilm = info.bilm ? ` · biLM ${info.bilm.name}` : "";
  document.getElementById("model").textContent = `Model ${info.model}${bilm}${scores}`;
  const select = document.getElementById("tokenizer");
  for (const name of info.tokenizers) {
    const option = document.createElement("option");
    option.value = option.textContent = name;
    select.appendChild(option);
  }
}

async function tag(event) {
  event.preventDefault();
  const error = document.getElementById("error");
  const result = document.getElementById("result");
  error.textContent = "";
  const started = performance.now();
  const body = {
    text: document.getElementById("text").value,
    tokenizer: document.getElementById("tokenizer").value || "news",
    include_tokens: true,
  };
  const response = await fetch("predict", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  document.getElementById("json").textContent = JSON.stringify(answer, null, 2);
  if (!response.ok) {
    result.replaceChildren();
    error.textContent = `${response.status}: ${answer.detail}`;
    return;
  }
  result.replaceChildren(...answer.documents.map((doc) => nerRenderText(doc, colours)));
  const count = answer.documents.reduce((n, doc) => n + doc.entities.length, 0);
  const ms = Math.round(performance.now() - started);
  document.getElementById("timing").textContent = `${count} entities · ${ms} ms`;
}

document.getElementById("form").addEventListener("submit", tag);
describeModel().catch((reason) => {
  document.getElementById("error").textContent = `cannot read info: ${reason}`;
});
