"""The `ner-serve` web application: the JSON API, the OpenAPI page and the entity page at ``/``.

    app = create_app(Tagger.load("outputs/run/model"), "outputs/run/model")
    uvicorn.run(app)

Every route answers JSON; bad input gets a 4xx whose ``detail`` says what is wrong, and never
reaches the model: the body is read with a size cap, decoded as UTF-8, parsed, validated against
`PredictRequest` and checked against the `Limits` before anything is queued. Requests are tagged
in shared micro-batches (`MicroBatcher`); one that waits longer than ``limits.timeout`` seconds
gets a 503.
"""

import asyncio
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from ner.common.downloads import is_url, sha256_file
from ner.data.tag_schemes import split_tag
from ner.data.tokenize import TOKENIZERS, Token, tokenize_sentences
from ner.serving.archive import MANIFEST, read_manifest
from ner.serving.batcher import MicroBatcher, Overloaded
from ner.serving.schema import (
    BiLMInfo,
    DocumentOut,
    ErrorOut,
    HealthOut,
    InfoOut,
    Limits,
    PredictRequest,
    PredictResponse,
)
from ner.serving.tagger import TaggedText, Tagger, joined_tokens

PAGE = Path(__file__).with_name("page")
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in {
        400: "the body is not UTF-8 JSON",
        413: "the request exceeds a limit (body size, texts, characters or tokens)",
        422: "the JSON does not match the schema, or a text or token is empty",
        503: "the server is overloaded, or the request timed out",
    }.items()
}


def run_scores(model_dir: Path, score: str = "f1") -> tuple[float | None, float | None]:
    """Dev and test F1 (or another `score`, e.g. accuracy) of the training run that saved
    `model_dir` (its results.json), if any."""
    try:
        results = json.loads((model_dir.parent / "results.json").read_text(encoding="utf-8"))
        return float(results["dev"][score]), float(results["test"][score])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def model_name(model_dir: Path) -> str:
    """A model directory's name; for a run's ``model/`` folder, the run's."""
    resolved = model_dir.resolve()
    return resolved.parent.name if resolved.name == "model" else resolved.name


def bilm_name(model_dir: Path, options: str) -> str:
    """The biLM's name: the folder it was saved from (e.g. ``elmo-small-news``), which the
    manifest records as its origin when the files were copied into the model directory."""
    entry = (read_manifest(model_dir).get("bilm") or {}).get("options") or {}
    source = entry.get("origin") or entry.get("source") or options
    path = PurePosixPath(urlparse(source).path) if is_url(source) else Path(source)
    return path.parent.name or path.stem


def model_info(tagger: Tagger, model_dir: Path, limits: Limits) -> InfoOut:
    """What GET /info answers: labels, schemes, the biLM, the run's scores, the checksum."""
    bilm = None
    if tagger.bilm is not None and tagger.bilm_files is not None:
        options = tagger.bilm.options
        bilm = BiLMInfo(
            name=bilm_name(model_dir, tagger.bilm_files.options),
            layers=tagger.bilm.num_layers,
            output_dim=tagger.bilm.output_dim,
            lstm_dim=options.lstm_dim,
            projection_dim=options.projection_dim,
            state=tagger.bilm.state,
        )
    dev, test = run_scores(model_dir)
    tags = list(tagger.model.tags)
    per_token = tagger.labels == "tokens"
    dev_accuracy, test_accuracy = run_scores(model_dir, "accuracy") if per_token else (None, None)
    return InfoOut(
        model=model_name(model_dir),
        labels=tags if per_token else sorted({split_tag(tag)[1] for tag in tags if tag != "O"}),
        label_kind=tagger.labels,
        dev_accuracy=dev_accuracy,
        test_accuracy=test_accuracy,
        tags=tags,
        tag_scheme=tagger.tag_scheme,
        model_tag_scheme=tagger.model_scheme,
        tokenizers=list(TOKENIZERS),
        bilm=bilm,
        dev_f1=dev,
        test_f1=test,
        archive_sha256=sha256_file(model_dir / MANIFEST),
        precision=tagger.precision,
        limits={k: float(v) for k, v in vars(limits).items()},
    )


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with a 413 as soon as it passes `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the body has {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the body passes the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_request(body: bytes) -> PredictRequest:
    """Decode, parse and validate a /predict body (HTTPException 400/422 with the reason)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HTTPException(
            400, f"the body is not valid UTF-8 (byte {body[error.start]:#04x} at {error.start})"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise HTTPException(400, f"the body is not JSON: {error}") from None
    try:
        request = PredictRequest.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors()
        )
        raise HTTPException(422, problems) from None
    given = [name for name in ("text", "texts", "tokens") if getattr(request, name) is not None]
    if len(given) != 1:
        raise HTTPException(422, 'give exactly one of "text", "texts" or "tokens"')
    return request


def prepare(request: PredictRequest, limits: Limits) -> tuple[list[str], list[list[list[Token]]]]:
    """Texts and their sentences of tokens; HTTPException 413/422 for oversized or empty input."""
    if request.tokens is not None:
        items: list[Any] = request.tokens
        name = "tokens"
    else:
        items = [request.text] if request.text is not None else request.texts  # type: ignore[list-item]
        name = "text" if request.text is not None else "texts"
    if not items:
        raise HTTPException(422, f'"{name}" is empty')
    if len(items) > limits.max_texts:
        raise HTTPException(
            413, f'"{name}" has {len(items)} items; the limit is {limits.max_texts}'
        )
    texts, documents = [], []
    for index, item in enumerate(items):
        where = name if name == "text" else f"{name}[{index}]"
        if request.tokens is not None:
            try:
                text, sentence = joined_tokens(item, index)
            except ValueError as error:
                raise HTTPException(422, f"tokens: {error}") from None
            if not sentence:
                raise HTTPException(422, f"{where} is an empty sentence")
        elif not item.strip():
            raise HTTPException(422, f"{where} is empty or whitespace only")
        else:
            text = item
        if len(text) > limits.max_text_chars:
            raise HTTPException(
                413, f"{where} has {len(text)} characters; the limit is {limits.max_text_chars}"
            )
        document = (
            [sentence]
            if request.tokens is not None
            else tokenize_sentences(text, request.tokenizer)
        )
        texts.append(text)
        documents.append(document)
    tokens = sum(len(sentence) for document in documents for sentence in document)
    if tokens > limits.max_tokens:
        raise HTTPException(
            413, f"the request has {tokens} tokens; the limit is {limits.max_tokens}"
        )
    return texts, documents


def document_json(result: TaggedText, include_tokens: bool) -> DocumentOut:
    """A `TaggedText` as the API's document."""
    record = result.to_json()
    tokens = None
    if include_tokens or result.confidences is not None:  # per-token labels: always
        tokens = [
            {**token, "tag": tag} for token, tag in zip(record["tokens"], result.tags, strict=True)
        ]
    return DocumentOut(text=result.text, entities=record["entities"], tokens=tokens)


def create_app(
    tagger: Tagger,
    model_dir: str | Path,
    limits: Limits | None = None,
    **batching: Any,
) -> FastAPI:
    """The application for one loaded tagger; `batching` goes to `MicroBatcher`
    (max_batch_tokens, max_wait, max_queue, batch_size)."""
    limits = limits or Limits()
    model_dir = Path(model_dir)
    info = model_info(tagger, model_dir, limits)
    batcher = MicroBatcher(tagger, **batching)
    app = FastAPI(
        title="ner-serve",
        summary=f"Named entities with the tagger {info.model}",
        version=info.archive_sha256[:12],
    )
    app.state.batcher = batcher
    app.router.add_event_handler("shutdown", batcher.close)

    @app.post(
        "/predict",
        response_model=PredictResponse,
        responses=ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": PredictRequest.model_json_schema()}},
            }
        },
    )
    async def predict(request: Request) -> PredictResponse:
        """Tag raw text (`text` or `texts`) or pre-tokenized sentences (`tokens`)."""
        parsed = parse_request(await read_body(request, limits.max_body_bytes))
        texts, documents = await run_in_threadpool(prepare, parsed, limits)
        try:
            future = batcher.submit(texts, documents)
        except Overloaded as error:
            raise HTTPException(503, f"the server is busy ({error}); retry later") from None
        try:
            results = await asyncio.wait_for(asyncio.wrap_future(future), limits.timeout)
        except TimeoutError:
            raise HTTPException(
                503, f"the request was not tagged within {limits.timeout:g} s; retry later"
            ) from None
        return PredictResponse(documents=[document_json(r, parsed.include_tokens) for r in results])

    @app.get("/health", response_model=HealthOut)
    async def health() -> HealthOut:
        """The server is up and its model is loaded."""
        return HealthOut(status="ok", requests=batcher.requests, batches=batcher.batches)

    @app.get("/info", response_model=InfoOut)
    async def model() -> InfoOut:
        """The model: labels, tag scheme, biLM, the run's dev/test F1, archive checksum."""
        return info

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(PAGE / "index.html", media_type="text/html")

    app.mount("/page", StaticFiles(directory=PAGE), name="page")
    return app


SETTINGS_VARIABLE = "NER_SERVE_SETTINGS"


def app_from_environment() -> FastAPI:
    """The application described by the JSON in ``$NER_SERVE_SETTINGS`` (model directory,
    threads, limits, batching): how `ner-serve --workers N` starts each worker process."""
    import torch

    settings = json.loads(os.environ[SETTINGS_VARIABLE])
    torch.set_num_threads(settings["threads"])
    tagger = Tagger.load(settings["model"], **settings["tagger"])
    return create_app(
        tagger, settings["model"], Limits(**settings["limits"]), **settings["batching"]
    )
