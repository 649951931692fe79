"""The `ner-serve` web application: the JSON API, its OpenAPI schema, the entity page at ``/``
and Label Studio's ML-backend protocol under ``/label-studio`` (`ner.serving.label_studio`).

    app = create_app(Tagger.load("outputs/run/model"), "outputs/run/model")
    uvicorn.run(app)

Every route answers JSON; bad input gets a 4xx whose ``detail`` says what is wrong, and never
reaches the model: a request whose Host header names another site is refused (`HostCheck`), a
body that is not declared ``application/json`` is refused unread (so a web page cannot post to
the API without the CORS preflight this server never grants), the body is read with a size cap
and a deadline, decoded as UTF-8, parsed, validated against `PredictRequest` and checked against
the `Limits` before anything is queued. Requests are tagged in shared micro-batches
(`MicroBatcher`); one that waits longer than ``limits.timeout`` seconds gets a 503, and one whose
client hangs up is dropped, or stops being tagged. Every answer carries the security headers of
`ner.serving.headers`.
"""

import asyncio
import json
import os
import re
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ner.common.downloads import is_url, sha256_file
from ner.data.tag_schemes import split_tag
from ner.data.tokenize import TOKENIZERS
from ner.model.archive import MANIFEST, model_name, model_version, read_manifest
from ner.model.inputs import PreparedText, TooManyTokens, prepared_tokens
from ner.model.results import TaggedText
from ner.model.tagger import Tagger
from ner.serving import label_studio
from ner.serving.batcher import MicroBatcher, Overloaded
from ner.serving.headers import NOSNIFF, SecurityHeaders
from ner.serving.hosts import LOOPBACK, HostCheck
from ner.serving.schema import (
    BiLMInfo,
    ErrorOut,
    HealthOut,
    InfoOut,
    Limits,
    PredictRequest,
    PredictResponse,
)

PAGE = Path(__file__).with_name("page")
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in {
        400: "the body is not UTF-8 JSON that Python reads, or the Host header is not allowed",
        408: "the body did not arrive within the read timeout",
        413: "the request exceeds a limit (body size, texts, characters or tokens)",
        415: "the body is not declared as JSON (Content-Type: application/json)",
        422: "the JSON does not match the schema, or a text or token is empty or not Unicode",
        503: "the server is overloaded, or the request timed out",
    }.items()
}


def run_scores(
    tagger: Tagger, model_dir: Path, score: str = "f1"
) -> tuple[float | None, float | None]:
    """Dev and test F1 (or another `score`, e.g. accuracy) of the training run that saved the
    model: from the folder's own metadata (`Tagger.scores`, written at save time), or for a
    folder saved before it kept them, from the run's results.json beside it; None without."""
    try:
        results = tagger.scores or json.loads(
            (model_dir.parent / "results.json").read_text(encoding="utf-8")
        )
        return float(results["dev"][score]), float(results["test"][score])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


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
    dev, test = run_scores(tagger, model_dir)
    tags = list(tagger.model.tags)
    per_token = tagger.labels == "tokens"
    dev_accuracy, test_accuracy = (
        run_scores(tagger, model_dir, "accuracy") if per_token else (None, None)
    )
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


def check_content_type(header: str | None) -> None:
    """Refuse (415) a body not declared as ``application/json``: a browser sends a cross-site
    form or ``text/plain`` body without asking the server first, a JSON one only after a CORS
    preflight, which this server never grants."""
    media = (header or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        given = f'"{header}"' if header else "none"
        raise HTTPException(
            415, f'send the body as JSON with "Content-Type: application/json" (given: {given})'
        )


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The request body, refused with a 413 as soon as it passes `limit` bytes, and with a 408
    (closing the connection) when it has not arrived whole within `timeout` seconds."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the body has {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise HTTPException(413, f"the body passes the limit of {limit} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise HTTPException(
            408,
            f"the body did not arrive within {timeout:g} s ({size} bytes came)",
            headers={"Connection": "close"},
        ) from None
    return b"".join(chunks)


class _NumberTooLong(ValueError):
    """An integer literal longer than `MAX_NUMBER_DIGITS` in a request body."""


# No request field takes a number, so a longer integer is refused before `int` reads it (which
# fails past 4,300 digits and takes quadratic time before that).
MAX_NUMBER_DIGITS = 100
# A JSON string escape of a UTF-16 surrogate (U+D800-U+DFFF): only such an escape can put a lone
# surrogate into a parsed string, since the body has already been decoded as strict UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _read_integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _NumberTooLong(len(literal.lstrip("-")))
    return int(literal)


def _lone_surrogate(value: str) -> int | None:
    """The index of the first lone surrogate in `value` (a code point UTF-8 cannot encode)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def find_lone_surrogate(data: Any) -> str | None:
    """Where the first lone surrogate of parsed JSON is (e.g. ``texts[2], character 5 (U+D800)``),
    or None; walked without recursion, so any nesting depth is safe."""
    pending: list[tuple[Any, str]] = [(data, "")]
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            if (index := _lone_surrogate(value)) is not None:
                return f"{where or 'body'}, character {index} (U+{ord(value[index]):04X})"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if (index := _lone_surrogate(key)) is not None:
                    return f"a key of {where or 'the body'} (U+{ord(key[index]):04X})"
                pending.append((item, f"{where}.{key}" if where else key))
        elif isinstance(value, list):
            pending.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(value))))
    return None


def read_json(body: bytes) -> Any:
    """Decode and parse a request body (HTTPException 400/422 with the reason): UTF-8 JSON
    with no integer longer than `MAX_NUMBER_DIGITS`, no nesting deeper than Python reads and
    no lone surrogate."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HTTPException(
            400, f"the body is not valid UTF-8 (byte {body[error.start]:#04x} at {error.start})"
        ) from None
    try:
        data = json.loads(text, parse_int=_read_integer)
    except json.JSONDecodeError as error:
        raise HTTPException(400, f"the body is not JSON: {error}") from None
    except _NumberTooLong as error:
        raise HTTPException(
            400,
            f"the body holds a number of {error.args[0]} digits; no field takes a number, and "
            f"none longer than {MAX_NUMBER_DIGITS} digits is read",
        ) from None
    except RecursionError:
        raise HTTPException(
            400, "the body nests arrays or objects too deeply (a request needs three levels)"
        ) from None
    if _SURROGATE_ESCAPE.search(text) and (where := find_lone_surrogate(data)):
        raise HTTPException(
            422,
            f"{where} is a lone surrogate, which is not a character: escape a character outside "
            "the Basic Multilingual Plane as a pair (\\ud83d\\ude00), or send it as UTF-8",
        )
    return data


def parse_request(body: bytes) -> PredictRequest:
    """Decode, parse and validate a /predict body (HTTPException 400/422 with the reason)."""
    data = read_json(body)
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


_WORD_CHARACTER = re.compile(r"\w")


def minimum_tokens(text: str) -> int:
    """A lower bound on the tokens of `text`, counted without tokenizing it: every
    whitespace-separated chunk that holds a letter, digit or underscore gives at least one token
    (a token never spans whitespace, and every word character ends up in one)."""
    return sum(1 for chunk in text.split() if _WORD_CHARACTER.search(chunk))


def prepare(tagger: Tagger, request: PredictRequest, limits: Limits) -> list[PreparedText]:
    """The request's texts split into sentences of tokens by the tagger's own preparation
    (`Tagger.prepare`, `ner.model.inputs.prepared_tokens`); HTTPException 413/422 for oversized
    or empty input.

    Raw texts are tokenized only once the whole request has passed the cheap checks: the number
    of texts, each text's characters, and `minimum_tokens` of all texts together against
    ``max_tokens``; tokenizing stops at the first text that takes the request past
    ``max_tokens``, so a refused request costs at most one text's tokenizing beyond the limit."""
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
    if request.tokens is not None:
        return _prepared_tokens(request.tokens, limits)
    for index, text in enumerate(items):
        where = name if name == "text" else f"{name}[{index}]"
        if not text.strip():
            raise HTTPException(422, f"{where} is empty or whitespace only")
        _check_characters(text, where, limits)
    least = sum(map(minimum_tokens, items))
    if least > limits.max_tokens:
        raise HTTPException(
            413, f"the request has at least {least} tokens; the limit is {limits.max_tokens}"
        )
    try:
        return tagger.prepare(items, tokenizer=request.tokenizer, max_tokens=limits.max_tokens)
    except TooManyTokens as error:
        where = name if name == "text" else f"{name}[{error.index}]"
        raise HTTPException(
            413,
            f"the request has {error.tokens} tokens up to {where}; the limit is {error.limit}",
        ) from None


def _check_characters(text: str, where: str, limits: Limits) -> None:
    if len(text) > limits.max_text_chars:
        raise HTTPException(
            413, f"{where} has {len(text)} characters; the limit is {limits.max_text_chars}"
        )


def _prepared_tokens(sentences: list[list[str]], limits: Limits) -> list[PreparedText]:
    """Pre-tokenized sentences as the tagger's `predict_tokens` prepares them; 422 for an empty
    sentence or token, 413 past the limits."""
    try:
        prepared = prepared_tokens(sentences)
    except ValueError as error:
        raise HTTPException(422, f"tokens: {error}") from None
    for index, text in enumerate(prepared):
        if not text.sentences:
            raise HTTPException(422, f"tokens[{index}] is an empty sentence")
        _check_characters(text.text, f"tokens[{index}]", limits)
    tokens = sum(len(text.sentences[0]) for text in prepared)
    if tokens > limits.max_tokens:
        raise HTTPException(
            413, f"the request has {tokens} tokens; the limit is {limits.max_tokens}"
        )
    return prepared


# A body up to this size is tokenized on the event loop: handing it to a thread costs more.
INLINE_BODY_BYTES = 4096
CLIENT_GONE = 499  # the status nginx logs for a client that closed its connection first


async def client_gone(request: Request) -> None:
    """Return once the client has closed its connection (call after reading the body)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def tagged(request: Request, future: Future, timeout: float) -> list[TaggedText] | None:
    """The results of a queued request, or None if its client hung up first; HTTPException 503
    after `timeout` seconds. On a hang-up, a timeout or a shutdown the request is cancelled:
    one whose micro-batch has not started is then never tagged, and a running micro-batch stops
    once none of its requests is waited for (`MicroBatcher`)."""
    result = asyncio.wrap_future(future)
    gone = asyncio.ensure_future(client_gone(request))
    try:
        done, _ = await asyncio.wait(
            {result, gone}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        gone.cancel()
        if not result.done():
            result.cancel()  # cancels `future` too, unless its batch is already running
    if result in done:
        return result.result()
    if gone in done:
        return None
    raise HTTPException(503, f"the request was not tagged within {timeout:g} s; retry later")


async def queued(
    tagger: Tagger, batcher: MicroBatcher, parsed: PredictRequest, limits: Limits, size: int
) -> Future:
    """Prepare a parsed request (`prepare`; a body of `size` bytes up to `INLINE_BODY_BYTES` on
    the event loop, a larger one in a thread so that the loop serves other requests meanwhile)
    and queue its texts to be tagged; HTTPException 503 when the queue is full."""
    if size <= INLINE_BODY_BYTES:  # tokenized in a fraction of a millisecond
        texts = prepare(tagger, parsed, limits)
    else:
        texts = await run_in_threadpool(prepare, tagger, parsed, limits)
    try:
        return batcher.submit(texts)
    except Overloaded as error:
        raise HTTPException(503, f"the server is busy ({error}); retry later") from None


def predict_response(results: list[TaggedText]) -> Response:
    """The /predict answer (`PredictResponse`): each document is the result's one JSON shape
    (`TaggedText.to_json`), serialized here rather than validated again against the response
    model: built from the tagger's results, they match it, and checking them cost more than
    tagging a short text."""
    documents = [result.to_json() for result in results]
    body = json.dumps(
        {"documents": documents}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    return Response(body.encode("utf-8"), media_type="application/json")


def add_error_handlers(app: FastAPI) -> None:
    """Every error answers JSON: a 4xx/5xx with its reason, a bug with a 500."""

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, error: StarletteHTTPException) -> JSONResponse:
        """A 4xx/5xx with its reason; a detail that quotes the input is made encodable (a lone
        surrogate becomes ``\\ud800``), so explaining bad input can never fail itself."""
        detail = str(error.detail).encode("utf-8", "backslashreplace").decode("utf-8")
        return JSONResponse({"detail": detail}, error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    async def failed(request: Request, error: Exception) -> JSONResponse:
        """A bug answers JSON too; uvicorn still logs its traceback. (Starlette sends this
        answer from outside every middleware, so it carries its security header itself.)"""
        detail = f"internal error ({type(error).__name__}); the server log has the details"
        return JSONResponse({"detail": detail}, 500, headers=NOSNIFF)


def add_label_studio_routes(
    app: FastAPI, tagger: Tagger, batcher: MicroBatcher, limits: Limits, version: str
) -> None:
    """Label Studio's ML-backend protocol under ``/label-studio`` (`ner.serving.label_studio`):
    its tasks are tagged in the same micro-batches, under the same limits, as /predict's."""

    @app.get(f"{label_studio.PREFIX}/health")
    async def label_studio_health() -> dict[str, Any]:
        """Label Studio's health check."""
        return label_studio.health(version)

    @app.post(f"{label_studio.PREFIX}/setup")
    async def label_studio_setup(request: Request) -> dict[str, Any]:
        """Label Studio connecting a project: its labeling config is checked."""
        label_studio.check_spans(tagger.labels)
        check_content_type(request.headers.get("content-type"))
        label_studio.checked_setup(
            read_json(await read_body(request, limits.max_body_bytes, limits.read_timeout))
        )
        return {"model_version": version}

    @app.post(f"{label_studio.PREFIX}/predict")
    async def label_studio_predict(request: Request) -> Response:
        """Pre-annotations of Label Studio tasks."""
        label_studio.check_spans(tagger.labels)
        check_content_type(request.headers.get("content-type"))
        body = await read_body(request, limits.max_body_bytes, limits.read_timeout)
        with batcher.arriving():
            texts, names = label_studio.task_texts(read_json(body))
            parsed = PredictRequest(texts=texts, tokenizer=tagger.tokenizer)
            future = await queued(tagger, batcher, parsed, limits, len(body))
        results = await tagged(request, future, limits.timeout)
        if results is None:
            return Response(status_code=CLIENT_GONE)
        return JSONResponse(label_studio.predictions(results, names, version))


def create_app(
    tagger: Tagger,
    model_dir: str | Path,
    limits: Limits | None = None,
    allowed_hosts: Iterable[str] = LOOPBACK,
    **batching: Any,
) -> FastAPI:
    """The application for one loaded tagger. allowed_hosts: the names a request's Host header
    may give (`ner.serving.hosts`; ``*`` for any); `batching` goes to `MicroBatcher`
    (max_batch_tokens, max_wait, max_queue, batch_size)."""
    limits = limits or Limits()
    model_dir = Path(model_dir)
    info = model_info(tagger, model_dir, limits)
    batcher = MicroBatcher(tagger, **batching)
    app = FastAPI(  # no /docs or /redoc: FastAPI's pages load their scripts from a CDN
        title="ner-serve",
        summary=f"Named entities with the tagger {info.model}",
        version=info.archive_sha256[:12],
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(HostCheck, allowed=allowed_hosts)
    app.add_middleware(SecurityHeaders)  # added last: outside HostCheck, so on its 400s too
    app.state.batcher = batcher
    app.router.add_event_handler("shutdown", batcher.close)

    add_error_handlers(app)

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
        check_content_type(request.headers.get("content-type"))
        body = await read_body(request, limits.max_body_bytes, limits.read_timeout)
        with batcher.arriving():  # a free model waits for this request to join its batch
            parsed = parse_request(body)
            future = await queued(tagger, batcher, parsed, limits, len(body))
        results = await tagged(request, future, limits.timeout)
        if results is None:  # nobody to answer
            return Response(status_code=CLIENT_GONE)  # type: ignore[return-value]
        return predict_response(results)  # type: ignore[return-value]

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

    add_label_studio_routes(app, tagger, batcher, limits, model_version(model_dir))
    app.mount("/page", StaticFiles(directory=PAGE), name="page")
    return app


SETTINGS_VARIABLE = "NER_SERVE_SETTINGS"


def app_from_environment() -> FastAPI:
    """The application described by the JSON in ``$NER_SERVE_SETTINGS`` (model directory,
    threads, limits, batching): how `ner-serve --workers N` starts each worker process."""
    import torch

    settings = json.loads(os.environ[SETTINGS_VARIABLE])
    torch.set_num_threads(settings["threads"])
    tagger = Tagger.load(
        settings["model"], allow_download=settings["allow_download"], **settings["tagger"]
    )
    return create_app(
        tagger,
        settings["model"],
        Limits(**settings["limits"]),
        settings["allowed_hosts"],
        **settings["batching"],
    )
