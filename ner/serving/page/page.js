// The ner-serve page: asks /info for the entity types, posts the text to /predict and shows
// the highlighted entities (for a per-token model: each token's label under it), the legend and
// the JSON answer.
"use strict";

let colours = {};
let perToken = false;

async function describeModel() {
  const response = await fetch("info");
  const info = await response.json();
  colours = nerColours(info.labels);
  perToken = info.label_kind === "tokens";
  if (perToken) document.querySelector("h1").textContent = "Token labels";
  document.getElementById("legend").replaceChildren(nerLegend(info.labels, colours));
  let scores = info.test_f1 === null ? "" : ` · test F1 ${info.test_f1.toFixed(2)}`;
  if (perToken && info.test_accuracy !== null) {
    scores = ` · test accuracy ${info.test_accuracy.toFixed(2)}`;
  }
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
  const render = perToken ? nerRenderTokens : nerRenderText;
  result.replaceChildren(...answer.documents.map((doc) => render(doc, colours)));
  const count = answer.documents.reduce(
    (n, doc) => n + (perToken ? doc.tokens.length : doc.entities.length), 0
  );
  const ms = Math.round(performance.now() - started);
  const unit = perToken ? "tokens" : "entities";
  document.getElementById("timing").textContent = `${count} ${unit} · ${ms} ms`;
}

document.getElementById("form").addEventListener("submit", tag);
describeModel().catch((reason) => {
  document.getElementById("error").textContent = `cannot read info: ${reason}`;
});
