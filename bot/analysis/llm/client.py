"""The one door to the LLM: an OpenAI-compatible chat-completions endpoint (the only openai importer).

Operators point this at OpenAI, DeepSeek, vLLM, llama.cpp, Ollama … which differ in what they
accept and how they fail (see the README's "LLM endpoints"). This module hides those differences:

- **Structured output, stepped down.** A call with a schema asks for `json_schema`, then
  `json_object` carrying the schema (llama-cpp-python enforces it that way), then plain
  `json_object`, then nothing — stepping down on a refusal that names the format, whatever the
  status (400, 422, and llama-cpp-python's 500 with a validation message). The floor is
  remembered for this endpoint; a refused format is never sent again (the first request at a
  new level goes alone, so a burst does not repeat a refusal).
- **Retries are ours** (the SDK's are off): 408/409/429/5xx and connection errors up to
  `llm_max_retries` times, honouring Retry-After (≤ 120 s, as the SDK does) else backing off
  0.5 s doubling to 8 s; a timed-out request is retried at most once.
- **A breaker.** After BREAKER_FAILURES consecutive endpoint failures, calls fail at once for
  BREAKER_SECONDS with the reason, so a dead endpoint costs a digest seconds, not N timeouts.
- **The window.** A context-length error is parsed (the servers' wordings differ: responses.py)
  into the window and the server's prompt count; both correct this endpoint's local estimate,
  which `usage.prompt_tokens` calibrates from the first answer on (endpoint.py, which also keeps
  what is learnt per endpoint).
- **Blank answers** (DeepSeek blanks an answer its JSON mode could not produce) cost no output:
  asked again up to BLANK_RETRIES times before the caller sees them.
- **Reasoning** (`<think>…</think>`) never reaches a streamed reader; `reasoning_content` is ignored.

The SDK is imported, and its client built, when the first request is made (`_sdk_client`): not
with this module, nor when the endpoint is configured — a run that asks the LLM nothing (an
empty day, a cached digest, a command) does not pay its ~0.5 s of start-up.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from settings import Settings

from ...core import metrics
from ...core.tenants import ACTING_FOR
from ...i18n import Count, phrase
from .. import cost
from ..reasoning import ReasoningFilter, opened_by_template
from .endpoint import JSON_OBJECT, JSON_OBJECT_SCHEMA, JSON_SCHEMA, LEVEL_NAMES, PLAIN, Endpoint, Message
from .responses import (
    Clause,
    Completion,
    ContextLengthError,
    LLMError,
    context_overflow,
    display_host,
    error_text,
    refuses_format,
    retry_after,
    server_message,
)

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__package__)  # the logger's name as before the split into a package

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Keyless local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
KEYLESS_PLACEHOLDER = "no-key"
RETRIED_STATUSES = frozenset({408, 409, 429})  # plus every 5xx
TIMEOUT_RETRIES = 1
BACKOFF_START, BACKOFF_MAX = 0.5, 8.0
BREAKER_FAILURES = 3
BREAKER_SECONDS = 120.0
BLANK_RETRIES = 2  # a blank answer is asked again this many times (it cost no output)


class LLM(Endpoint):
    """An OpenAI-compatible endpoint with one concurrency bound for every request."""

    def __init__(self, settings: Settings, memory=None, budget=None):
        base_url = settings.openai_base_url or DEFAULT_BASE_URL
        super().__init__(settings, memory, base_url)  # the window, the ratio, the format floor
        self.budget = budget  # bot.cost.Budget: the month's tokens, counted and capped (None: neither)
        self.timeout: float = settings.llm_timeout
        self._max_retries: int = settings.llm_max_retries
        self._host = display_host(base_url)
        # Names this endpoint in cache keys (the base URL hashed: it may carry credentials).
        self.endpoint_id = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:10]
        self._api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        self._base_url = base_url
        self._client: openai.AsyncOpenAI | None = None  # built by the first request (_sdk_client)
        self._slots = asyncio.Semaphore(settings.llm_concurrency)
        self._proven: set[int] = set()  # levels the endpoint has answered (not refused)
        self.blank_retries = BLANK_RETRIES
        self._failures = 0  # consecutive endpoint failures
        self._open_until = 0.0
        self._last_failure: LLMError | None = None
        self._template_opens_reasoning = False  # learnt from an answer that closes an unopened block

    # --- requests ---------------------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_mode: bool = True,
        schema: dict[str, Any] | None = None,
        schema_name: str = "answer",
    ) -> Completion:
        """One chat completion. `schema` asks for that structure where the endpoint offers it;
        `json_mode` for a JSON object; neither, for text."""
        messages = list(messages)
        await _sdk_imported()  # before the handlers below name its exceptions
        await self.recall()
        try:
            async with self._slots:
                self._check_breaker()
                await self._check_budget()  # with the slot held: a queued request sees the latest count
                started = time.monotonic()
                try:
                    for blank in range(self.blank_retries + 1):
                        result = await self._complete(
                            messages, self._fit_output(messages, max_tokens), json_mode, schema, schema_name
                        )
                        if result.text.strip() or result.finish_reason == "length" or blank == self.blank_retries:
                            break
                        # DeepSeek answers blank content when its JSON mode produced nothing: it
                        # cost no output, so ask again rather than spend the corrective retry.
                        metrics.count("llm_rejections", reason="blank")
                        log.info(
                            "The LLM endpoint at %s answered blank content; asking again (%d of %d).",
                            self._host,
                            blank + 1,
                            self.blank_retries,
                        )
                    metrics.count("llm_calls", purpose="complete", outcome="ok")
                    return result
                except openai.OpenAIError as exc:
                    metrics.count("llm_calls", purpose="complete", outcome="error")
                    raise self._error(exc, messages) from None
                finally:
                    metrics.observe("llm_seconds", time.monotonic() - started, purpose="complete")
        finally:
            await self._remember()

    async def stream(self, messages: Sequence[Message], *, max_tokens: int) -> AsyncIterator[str]:
        """The answer's visible content deltas, in order (reasoning blocks removed). Close the
        generator (or read it to the end): it holds a concurrency slot while open."""
        messages = list(messages)
        await _sdk_imported()  # before the handlers below name its exceptions
        await self.recall()
        await self._remember()  # what the last request learnt (a stream cannot await when closed)
        async with self._slots:
            self._check_breaker()
            await self._check_budget()  # a question over the month's budget is not sent
            started = time.monotonic()
            visible = ReasoningFilter(pre_opened=self._template_opens_reasoning)
            try:
                request: dict[str, Any] = dict(
                    model=self.model,
                    messages=messages,
                    stream=True,
                    max_tokens=self._fit_output(messages, max_tokens),
                )
                if self._counts_streams():
                    request["stream_options"] = {"include_usage": True}
                response = await self._send(request)
                self._succeeded()
                async with response:
                    async for chunk in response:
                        if (usage := getattr(chunk, "usage", None)) is not None:
                            await self._spent(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
                        for choice in chunk.choices:
                            # delta.reasoning_content (vLLM, DeepSeek) is never read: not for readers
                            if choice.delta is not None and choice.delta.content:
                                if text := visible.feed(choice.delta.content):
                                    yield text
                if text := visible.flush():
                    yield text
                metrics.count("llm_calls", purpose="stream", outcome="ok")
            except openai.OpenAIError as exc:
                metrics.count("llm_calls", purpose="stream", outcome="error")
                raise self._error(exc, messages) from None
            finally:
                metrics.observe("llm_seconds", time.monotonic() - started, purpose="stream")

    async def aclose(self) -> None:
        await self._remember()
        if self._client is not None:
            await self._client.close()

    def _sdk_client(self) -> openai.AsyncOpenAI:
        """The SDK's client, built on first use. base_url and api_key are always passed explicitly
        so the SDK never reads the environment; max_retries=0: the SDK would retry a timeout as
        often as a 429 (see the module doc)."""
        if self._client is None:
            _import_sdk()
            self._client = openai.AsyncOpenAI(
                base_url=self._base_url,
                api_key=self._api_key or KEYLESS_PLACEHOLDER,
                max_retries=0,
                timeout=self.timeout,
            )
        return self._client

    # --- internals --------------------------------------------------------------------------------
    async def _complete(
        self, messages: list[Message], max_tokens: int, json_mode: bool, schema: dict[str, Any] | None, schema_name: str
    ) -> Completion:
        wanted = JSON_SCHEMA if schema is not None else JSON_OBJECT if json_mode else PLAIN
        while True:
            level = max(wanted, self._floor)
            try:
                if level not in self._proven and level != PLAIN:
                    async with self._lock("probe"):  # the first request at a level goes alone
                        if max(wanted, self._floor) != level:
                            continue  # refused meanwhile: step down
                        if level not in self._proven:
                            completion = await self._create(messages, max_tokens, level, schema, schema_name)
                            self._proven.add(level)
                            return completion
                return await self._create(messages, max_tokens, level, schema, schema_name)
            except openai.APIStatusError as exc:
                if level == PLAIN or not _refuses_format(exc):
                    self._proven.add(level)  # the server answered something else: no more probing
                    raise
                self._floor = max(self._floor, level + 1)
                log.info(
                    "The LLM endpoint at %s refuses response_format %s (HTTP %s); using %s from now on.",
                    self._host,
                    LEVEL_NAMES[level],
                    exc.status_code,
                    LEVEL_NAMES[self._floor],
                )
            except openai.OpenAIError:
                self._proven.add(level)
                raise

    async def _create(
        self, messages: list[Message], max_tokens: int, level: int, schema: dict[str, Any] | None, schema_name: str
    ) -> Completion:
        request: dict[str, Any] = dict(model=self.model, messages=messages, max_tokens=max_tokens)
        if level == JSON_SCHEMA and schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif level == JSON_OBJECT_SCHEMA and schema is not None:
            request["response_format"] = {"type": "json_object", "schema": schema}
        elif level in (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT):
            request["response_format"] = {"type": "json_object"}
        response = await self._send(request)
        self._succeeded()
        usage = response.get("usage") if isinstance(response, dict) else None
        usage = usage if isinstance(usage, dict) else None
        prompt_tokens = int(usage.get("prompt_tokens") or 0) if usage is not None else 0
        if usage is not None:
            completion_tokens = int(usage.get("completion_tokens") or 0)
            await self._spent(prompt_tokens, completion_tokens)
            self._calibrate(messages, prompt_tokens)
            self._check_room(prompt_tokens)
        choices = response.get("choices") if isinstance(response, dict) else None
        if not choices or not isinstance(choices[0], dict):
            return Completion(text="", finish_reason="", prompt_tokens=prompt_tokens)
        choice: dict[str, Any] = choices[0]
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        content = content if isinstance(content, str) else ""
        # message.reasoning_content (a reasoning parser's output) is ignored: only content answers.
        if opened_by_template(content):
            self._template_opens_reasoning = True  # streams from now on may start inside a block
        return Completion(
            text=content, finish_reason=str(choice.get("finish_reason") or ""), prompt_tokens=prompt_tokens
        )

    async def _send(self, request: dict[str, Any]):
        """The SDK call with our retry policy (module doc)."""
        retries = timeouts = 0
        failure: openai.APIError
        while True:
            try:
                if request.get("stream"):
                    return await self._sdk_client().chat.completions.create(**request)
                # A completion as JSON, its answer as JSON: the SDK's typed `create` walks the
                # request and builds models of the answer, 1.5 ms of CPU a call that a digest of
                # hundreds of commits pays for nothing. Its transport, errors and auth still apply.
                return await self._sdk_client().post("/chat/completions", body=request, cast_to=object)
            except openai.APITimeoutError:
                timeouts += 1
                cost.note_timeout()
                if timeouts > min(TIMEOUT_RETRIES, self._max_retries):
                    raise
                log.info("LLM request timed out after %g s; retrying once", self.timeout)
                continue
            except openai.APIConnectionError as exc:
                failure, delay = exc, None
            except openai.APIStatusError as exc:
                status = exc.status_code
                if not (status in RETRIED_STATUSES or status >= 500) or _refuses_format(exc):
                    raise
                failure, delay = exc, retry_after(exc.response.headers)
            retries += 1
            if retries > self._max_retries:
                raise failure
            if delay is None:
                delay = min(BACKOFF_START * 2 ** (retries - 1), BACKOFF_MAX) * (1 - 0.25 * random.random())
            await asyncio.sleep(delay)

    # --- the month's budget ---------------------------------------------------------------------
    async def _spent(self, prompt_tokens: int, completion_tokens: int) -> None:
        cost.record(prompt_tokens, completion_tokens)  # /metrics and the digest being built
        if self.budget is not None:
            await self.budget.spend(prompt_tokens + completion_tokens)

    async def _check_budget(self) -> None:
        """Not sent once the deployment's month, or the month of the workspace the request is
        made for (tenants.ACTING_FOR), reached its budget (bot/analysis/cost.py)."""
        if self.budget is None or (over := await self.budget.over(ACTING_FOR.get())) is None:
            return
        workspace = over == "workspace"
        cost.note_budget(workspace=workspace)
        metrics.count("llm_calls", purpose="skipped", outcome="budget")
        if workspace:
            said = phrase("cost.workspace_budget_error", budget=f"{self.budget.per_workspace:,}")
        else:
            said = phrase("cost.budget_error", budget=f"{self.budget.limit:,}")
        raise LLMError(said, kind="budget")

    def _counts_streams(self) -> bool:
        """Streamed answers report their usage only when asked (`stream_options.include_usage`),
        which some older servers refuse: asked only when a budget is set that needs it."""
        return self.budget is not None and bool(self.budget.limit or self.budget.per_workspace)

    # --- the breaker ----------------------------------------------------------------------------
    def _check_breaker(self) -> None:
        if self._open_until and time.monotonic() < self._open_until and self._last_failure is not None:
            metrics.count("llm_calls", purpose="skipped", outcome="breaker")
            last = self._last_failure
            raise LLMError(phrase("llm_path.not_asked_again", failure=Clause(last), n=BREAKER_FAILURES), kind=last.kind)

    def _succeeded(self) -> None:
        self._failures, self._open_until = 0, 0.0

    def _failed(self, error: LLMError) -> None:
        if error.kind not in ("timeout", "unreachable", "http_error") or isinstance(error, ContextLengthError):
            return
        self._failures += 1
        self._last_failure = error
        if self._failures >= BREAKER_FAILURES and not self._open_until:
            self._open_until = time.monotonic() + BREAKER_SECONDS
            log.warning(
                "The LLM endpoint at %s failed %d times in a row (%s); offline analysis for the next %g s.",
                self._host,
                self._failures,
                error,
                BREAKER_SECONDS,
            )

    # --- errors ---------------------------------------------------------------------------------
    def _error(self, exc: openai.OpenAIError, messages: Sequence[Message]) -> LLMError:
        if isinstance(exc, openai.APIStatusError) and (context := self._context_error(exc, messages)):
            log.info("%s", context)
            return context
        error = LLMError(self._describe(exc), kind=_kind(exc))
        if not (
            isinstance(exc, openai.APIStatusError)
            and 400 <= exc.status_code < 500
            and exc.status_code not in RETRIED_STATUSES
        ):
            self._failed(error)  # a 4xx is about the request, not the endpoint's health
        log.warning("%s", error)
        return error

    def _context_error(self, exc: openai.APIStatusError, messages: Sequence[Message]) -> ContextLengthError | None:
        found = context_overflow(exc.status_code, _error_text(exc))
        if found is None:
            return None
        window, prompt = found
        if window:
            self.context_tokens = min(window, self.context_tokens or window)
        if prompt:
            self._calibrate(messages, prompt)
        size = phrase("llm_path.window_size", tokens=f"{window:,}") if window else ""
        return ContextLengthError(phrase("llm_path.context_window", size=size), window, prompt)

    def _describe(self, exc: openai.OpenAIError) -> str:
        """One sentence for the reader (a catalogue phrase, told in the reader's language where
        it is shown); never the key, never the base URL's credentials."""
        if isinstance(exc, openai.APITimeoutError):
            return phrase("llm_path.timed_out", seconds=f"{self.timeout:g}", retried=self._retried(timeout=True))
        if isinstance(exc, openai.APIConnectionError):
            return phrase("llm_path.unreachable", host=self._host, retried=self._retried())
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retried = self._retried() if status in RETRIED_STATUSES or status >= 500 else ""
            detail = self._server_message(exc)
            said = phrase("llm_path.server_said", message=detail) if detail else ""
            return phrase("llm_path.http_error", status=status, retried=retried, detail=said)
        return phrase("llm_path.request_failed", kind=type(exc).__name__)

    def _retried(self, timeout: bool = False) -> object:
        """The clause saying how often the request was retried ('' when it was not)."""
        n = min(TIMEOUT_RETRIES, self._max_retries) if timeout else self._max_retries
        if not n:
            return ""
        return phrase("llm_path.retried_once_more") if timeout else Count(n, "llm_path.retried_after")

    def _server_message(self, exc: openai.APIStatusError) -> str:
        # the SDK hands over the JSON "error" object (or raw text, ignored)
        return server_message(exc.body, self._api_key)


async def _sdk_imported() -> None:
    """The SDK, imported in a worker thread the first time: its ~0.5 s of import is not the event
    loop's, which acknowledges requests meanwhile."""
    if "openai" not in globals():
        await asyncio.to_thread(_import_sdk)


def _import_sdk() -> None:
    """The openai SDK, imported by the first request (every other use of it here runs after that):
    a process that asks the LLM nothing does not pay its ~0.5 s of start-up."""
    global openai
    if "openai" not in globals():
        import openai


def _error_text(exc: openai.APIStatusError) -> str:
    return error_text(exc.message, exc.body)


def _refuses_format(exc: openai.APIStatusError) -> bool:
    """A 4xx, or a 5xx with a validation message (llama-cpp-python), that names the format."""
    return refuses_format(exc.status_code, _error_text(exc))


def _kind(exc: openai.OpenAIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable"
    return "http_error"
