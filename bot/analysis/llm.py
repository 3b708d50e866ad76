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
- **The window.** A context-length error is parsed (the servers' wordings differ) into the window
  and the server's prompt count; both correct this endpoint's local estimate. `usage.prompt_tokens`
  calibrates it from the first answer on (the estimate follows the highest of the last answers'
  ratios: undercounting overflows the window, overcounting only wastes room). A prompt is budgeted
  leaving the output its request needs (`prompt_budget(need)`), and `max_tokens` asks for at
  most what the prompt leaves.
- **Blank answers** (DeepSeek blanks an answer its JSON mode could not produce) cost no output:
  asked again up to BLANK_RETRIES times before the caller sees them.
- **Remembered per endpoint.** With a `memory` (the Redis store), the format step, the window and
  the token ratio learnt are kept per (base URL, model) for ANALYSIS_TTL, so the next process
  neither probes a refused format nor overflows a known window again.
- **Reasoning** (`<think>…</think>`) never reaches a streamed reader; `reasoning_content` is ignored.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core import metrics
from ..core.models import BotError
from ..core.store import ANALYSIS_TTL
from ..diffs.tokens import estimate_tokens
from ..i18n import Count, localize, phrase
from . import cost
from .reasoning import ReasoningFilter, opened_by_template
from .tokens_ratio import TokensRatio

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Keyless local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
KEYLESS_PLACEHOLDER = "no-key"
RETRIED_STATUSES = frozenset({408, 409, 429})  # plus every 5xx
SERVER_MESSAGE_CHARS = 160
# Anything shaped like an API key in a server's error message (OpenAI echoes a masked one).
KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key)-[A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)
TIMEOUT_RETRIES = 1
MAX_RETRY_AFTER = 120.0
BACKOFF_START, BACKOFF_MAX = 0.5, 8.0
BREAKER_FAILURES = 3
BREAKER_SECONDS = 120.0
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators per chat message
CONTEXT_MARGIN_TOKENS = 256  # what the calibrated estimate may still be off by
MIN_OUTPUT_TOKENS = 256
# The output an analysis answer needs. Measured (README, "LLM endpoints"): a 1.5B model's
# analyses used at most 215 tokens, its headline 363; a high-importance answer (4 risks, 4
# recommendations) in Chinese stays under ~800. The prompt is budgeted leaving this much;
# `max_tokens` may still ask for more when the prompt leaves more.
ANALYSIS_OUTPUT_TOKENS = 1024
# Every request keeps at least this much of a known window for its answer (the analysis's need:
# a headline or a thread answer is not rushed either).
OUTPUT_RESERVE = ANALYSIS_OUTPUT_TOKENS
# The learnt ratio bounds each kind of text (Chinese, the rest) as the counts so far showed it;
# within a kind texts still differ (Qwen2.5: code 0.76 of the estimate, English prose 0.83). A
# prompt sized to the window's last token would eat the answer's room: budgets assume this much
# more than the bound says.
RATIO_SLACK = 0.1
BLANK_RETRIES = 2  # a blank answer is asked again this many times (it cost no output)
# A prompt refused for its length costs no output either: callers rebuild it with the corrected
# estimate and send it again this many times (the second time covers a prompt whose text the
# server counts higher than the refused one's: a diff-heavy prompt teaches a low ratio).
CONTEXT_RETRIES = 2
MEMORY_TTL = ANALYSIS_TTL  # what is learnt about an endpoint is kept as long as its analyses

# Structured-output levels, strongest first.
JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT, PLAIN = range(4)
LEVEL_NAMES = ("json_schema", "json_object+schema", "json_object", "none")
_NAMES_FORMAT = re.compile(
    r"response[_ ]?format|json[_ ]schema|json_object|structured output|guided_json|"
    r"'text' or 'json_object'",
    re.IGNORECASE,
)
_CONTEXT = re.compile(r"context (?:length|window|size)|too many tokens|prompt is too long", re.IGNORECASE)
_WINDOW = (re.compile(r"maximum context length is (\d+)", re.I), re.compile(r"exceed context window of (\d+)", re.I))
_PROMPT = (
    re.compile(r"messages resulted in (\d+) tokens", re.I),  # OpenAI
    re.compile(r"\((\d+) in the messages", re.I),  # vLLM (older), llama-cpp-python
    re.compile(r"has (\d+) input tokens", re.I),  # vLLM (newer)
    re.compile(r"(\d+) of text input", re.I),  # OpenRouter
    re.compile(r"Requested tokens \((\d+)\)", re.I),
)  # llama-cpp-python (completion)

Message = dict[str, str]


class LLMError(BotError):
    """The LLM endpoint failed after our retries; the message is one sentence, no secrets.
    `kind`: timeout | unreachable | http_error | context — what the digest's notice says — or
    budget: the month's token budget is spent (bot/analysis/cost.py), nothing was sent."""

    def __init__(self, message: str, kind: str = "http_error"):
        super().__init__(message)
        self.kind = kind


class ContextLengthError(LLMError):
    """The request did not fit the model's window; the endpoint's estimate is corrected already,
    so asking again with `prompt_limit()` fits."""

    def __init__(self, message: str, window: int | None, prompt_tokens: int | None):
        super().__init__(message, kind="context")
        self.window = window
        self.prompt_tokens = prompt_tokens


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str  # "stop", "length", "content_filter", … ("" when the endpoint gave none)
    prompt_tokens: int = 0  # as the endpoint counted them (0: not reported)


class LLM:
    """An OpenAI-compatible endpoint with one concurrency bound for every request."""

    def __init__(self, settings, memory=None, budget=None):
        self.model: str = settings.llm_model
        self.budget = budget  # bot.cost.Budget: the month's tokens, counted and capped (None: neither)
        self._max_prompt_tokens: int = settings.llm_max_prompt_tokens
        self._max_output_tokens: int = settings.llm_max_output_tokens
        self.context_tokens: int | None = getattr(settings, "llm_context_tokens", None)
        self.timeout: float = settings.llm_timeout
        self._max_retries: int = settings.llm_max_retries
        base_url = settings.openai_base_url or DEFAULT_BASE_URL
        self._host = _display_host(base_url)
        # Names this endpoint in cache keys (the base URL hashed: it may carry credentials).
        self.endpoint_id = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:10]
        self._api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        # base_url and api_key are always passed explicitly so the SDK never reads the environment;
        # max_retries=0: the SDK would retry a timeout as often as a 429 (see the module doc).
        _import_sdk()
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=self._api_key or KEYLESS_PLACEHOLDER, max_retries=0, timeout=self.timeout
        )
        self._slots = asyncio.Semaphore(settings.llm_concurrency)
        self._floor = JSON_SCHEMA  # the strongest format this endpoint has not refused
        self._proven: set[int] = set()  # levels the endpoint has answered (not refused)
        self._ratio = TokensRatio()  # the endpoint's tokens per locally estimated token, at most
        self.blank_retries = BLANK_RETRIES
        self._memory = memory  # a Store (get_json, set_json, k) or None
        self._memory_key = (
            memory.k("llm", "endpoint", hashlib.sha256(f"{base_url}\n{self.model}".encode()).hexdigest()[:16])
            if memory is not None
            else ""
        )
        self._recalled = memory is None
        self._saved: tuple | None = None  # the state last written to (or read from) memory
        self._locks: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = {}
        self._failures = 0  # consecutive endpoint failures
        self._open_until = 0.0
        self._last_failure: LLMError | None = None
        self._template_opens_reasoning = False  # learnt from an answer that closes an unopened block

    # --- the window -------------------------------------------------------------------------------
    @property
    def max_output_tokens(self) -> int:
        """The most output a request asks for (the setting); each request is clamped to what its
        prompt leaves of a known window."""
        return self._max_output_tokens

    def output_reserve(self, need: int) -> int:
        """The output kept free in the window for a request that needs `need` tokens (at least
        OUTPUT_RESERVE, unless the setting caps every answer lower or the window is tiny)."""
        reserve = min(max(need, OUTPUT_RESERVE), self._max_output_tokens)
        if self.context_tokens:
            reserve = min(reserve, self.context_tokens // 2)
        return max(MIN_OUTPUT_TOKENS, reserve)

    def prompt_budget(self, need: int) -> int:
        """The prompt budget (locally estimated tokens) of a request whose answer needs `need`."""
        return self.prompt_limit(self.output_reserve(need))

    @property
    def max_prompt_tokens(self) -> int:
        """The prompt budget of a commit analysis."""
        return self.prompt_budget(ANALYSIS_OUTPUT_TOKENS)

    def prompt_limit(self, output_tokens: int) -> int:
        """The prompt budget in locally estimated tokens when `output_tokens` are kept free."""
        limit = self._max_prompt_tokens
        if self.context_tokens:
            room = self.context_tokens - output_tokens - CONTEXT_MARGIN_TOKENS
            limit = min(limit, int(room / (self.token_ratio * (1 + RATIO_SLACK))))
        return max(limit, 0)

    def estimate(self, messages: Sequence[Message]) -> int:
        """The endpoint's token count for `messages`, as this client now believes it."""
        return int(self._local(messages) * self.token_ratio) + 1

    def _local(self, messages: Sequence[Message]) -> int:
        return sum(estimate_tokens(m.get("content") or "") + MESSAGE_OVERHEAD_TOKENS for m in messages)

    @property
    def token_ratio(self) -> float:
        """The endpoint's tokens per locally estimated token, at most (bot/analysis/tokens_ratio.py)."""
        return self._ratio.bound

    def _calibrate(self, messages: Sequence[Message], server_tokens: int) -> None:
        # Undercounting overflows the window, overcounting only wastes room: the bound follows the
        # counts from the first answer on, so a server that counts fewer tokens than the local
        # estimate (Qwen: 0.58-0.83 of it by text) gets fuller prompts.
        texts = [m.get("content") or "" for m in messages]
        self._ratio.observe_texts(texts, MESSAGE_OVERHEAD_TOKENS * len(messages), server_tokens)

    def _check_room(self, prompt_tokens: int) -> None:
        """Counted and logged when a prompt left its answer less than the reserve (the calibration
        just made has raised the estimate, so the next prompt of its kind is smaller)."""
        if self.context_tokens and prompt_tokens:
            room = self.context_tokens - prompt_tokens
            if room < self.output_reserve(OUTPUT_RESERVE):
                metrics.count("llm_room_short")
                log.info(
                    "An LLM prompt of %d tokens left %d of the %d-token window to answer (reserve %d).",
                    prompt_tokens,
                    room,
                    self.context_tokens,
                    self.output_reserve(OUTPUT_RESERVE),
                )

    def _fit_output(self, messages: Sequence[Message], max_tokens: int) -> int:
        if not self.context_tokens:
            return max_tokens
        # The prompt may count up to RATIO_SLACK more than estimated: asking for all the rest would
        # have the server refuse prompt + max_tokens as over the window.
        room = self.context_tokens - int(self.estimate(messages) * (1 + RATIO_SLACK)) - CONTEXT_MARGIN_TOKENS
        return max(MIN_OUTPUT_TOKENS, min(max_tokens, room))

    # --- memory (per endpoint, in Redis) --------------------------------------------------------
    def _state(self) -> tuple:
        return (self._floor, self.context_tokens, round(self.token_ratio, 3) if self._ratio.learnt else None)

    async def recall(self) -> None:
        """Once per client: what an earlier process learnt about this endpoint. Callers that size
        a prompt by the window await it first; every request does."""
        if self._recalled:
            return
        async with self._lock("recall"):
            if self._recalled:
                return
            try:
                data = await self._memory.get_json(self._memory_key)
            except Exception as exc:  # noqa: BLE001 — the store is a convenience here: never fail a request on it
                log.info("LLM endpoint memory unavailable (%s)", exc)
                data = None
            self._recalled = True
            if not isinstance(data, dict):
                return
            if isinstance(data.get("floor"), int) and JSON_SCHEMA <= data["floor"] <= PLAIN:
                self._floor = max(self._floor, data["floor"])
            if isinstance(data.get("window"), int) and data["window"] > 0:
                self.context_tokens = min(data["window"], self.context_tokens or data["window"])
            if isinstance(data.get("ratio"), (int, float)) and data["ratio"] > 0:
                self._ratio.remembered(float(data["ratio"]))
            self._saved = self._state()

    async def _remember(self) -> None:
        """Write what was learnt, when it changed (a refused format, a window, a new ratio)."""
        if self._memory is None or not self._recalled:
            return
        state = self._state()
        if state == self._saved:
            return
        self._saved = state
        floor, window, ratio = state
        try:
            await self._memory.set_json(
                self._memory_key, {"floor": floor, "window": window, "ratio": ratio}, ttl=MEMORY_TTL
            )
        except Exception as exc:  # noqa: BLE001 — as above: the memory is a convenience, never a failure
            log.info("LLM endpoint memory unavailable (%s)", exc)

    def _lock(self, name: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # asyncio primitives belong to one loop (tests, CLI runs)
        held = self._locks.get(name)
        if held is None or held[0] is not loop:
            held = self._locks[name] = (loop, asyncio.Lock())
        return held[1]

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
        await self.recall()
        await self._remember()  # what the last request learnt (a stream cannot await when closed)
        async with self._slots:
            self._check_breaker()
            started = time.monotonic()
            visible = ReasoningFilter(pre_opened=self._template_opens_reasoning)
            try:
                response = await self._send(
                    dict(
                        model=self.model,
                        messages=messages,
                        stream=True,
                        max_tokens=self._fit_output(messages, max_tokens),
                    )
                )
                self._succeeded()
                async with response:
                    async for chunk in response:
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
        await self._client.close()

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
        usage = getattr(response, "usage", None)
        prompt_tokens = (getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        if usage is not None:
            completion_tokens = getattr(usage, "completion_tokens", 0) or 0
            cost.record(prompt_tokens, completion_tokens)  # /metrics and the digest being built
            if self.budget is not None:
                await self.budget.spend(prompt_tokens + completion_tokens)
            self._calibrate(messages, prompt_tokens)
            self._check_room(prompt_tokens)
        if not response.choices:
            return Completion(text="", finish_reason="", prompt_tokens=prompt_tokens)
        choice = response.choices[0]
        # message.reasoning_content (a reasoning parser's output) is ignored: only content answers.
        if opened_by_template(choice.message.content or ""):
            self._template_opens_reasoning = True  # streams from now on may start inside a block
        return Completion(
            text=choice.message.content or "", finish_reason=choice.finish_reason or "", prompt_tokens=prompt_tokens
        )

    async def _send(self, request: dict[str, Any]):
        """The SDK call with our retry policy (module doc)."""
        retries = timeouts = 0
        failure: openai.APIError
        while True:
            try:
                return await self._client.chat.completions.create(**request)
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
                failure, delay = exc, _retry_after(exc.response.headers)
            retries += 1
            if retries > self._max_retries:
                raise failure
            if delay is None:
                delay = min(BACKOFF_START * 2 ** (retries - 1), BACKOFF_MAX) * (1 - 0.25 * random.random())
            await asyncio.sleep(delay)

    # --- the month's budget ---------------------------------------------------------------------
    async def _check_budget(self) -> None:
        if self.budget is not None and await self.budget.exhausted():
            cost.note_budget()
            metrics.count("llm_calls", purpose="skipped", outcome="budget")
            raise LLMError(phrase("cost.budget_error", budget=f"{self.budget.limit:,}"), kind="budget")

    # --- the breaker ----------------------------------------------------------------------------
    def _check_breaker(self) -> None:
        if self._open_until and time.monotonic() < self._open_until and self._last_failure is not None:
            metrics.count("llm_calls", purpose="skipped", outcome="breaker")
            last = self._last_failure
            raise LLMError(
                phrase("llm_path.not_asked_again", failure=_Clause(last), n=BREAKER_FAILURES), kind=last.kind
            )

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
        text = _error_text(exc)
        if not (400 <= exc.status_code < 500 and _CONTEXT.search(text)):
            return None
        window = _first_int(_WINDOW, text)
        prompt = _first_int(_PROMPT, text)
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
        body = exc.body  # the SDK hands over the JSON "error" object (or raw text, ignored)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body = body["error"]
        message = str(body.get("message") or "").strip() if isinstance(body, dict) else ""
        if not message:
            return ""
        if self._api_key:
            message = message.replace(self._api_key, "[REDACTED]")
        message = KEY_LIKE.sub("[REDACTED]", message)
        message = " ".join(message.split()).rstrip(".")
        if len(message) > SERVER_MESSAGE_CHARS:
            message = message[: SERVER_MESSAGE_CHARS - 1] + "…"
        return message


def _import_sdk() -> None:
    """The openai SDK, imported when the first endpoint is built (every other use of it here runs
    after that): a digest without an LLM does not pay its ~0.4 s of start-up."""
    global openai
    import openai


def _error_text(exc: openai.APIStatusError) -> str:
    return f"{exc.message} {exc.body!s}"


def _refuses_format(exc: openai.APIStatusError) -> bool:
    """A 4xx, or a 5xx with a validation message (llama-cpp-python), that names the format."""
    status = exc.status_code
    if status in (401, 403, 404, 408, 409, 429) or (status >= 500 and status != 500):
        return False
    text = _error_text(exc)
    return bool(_NAMES_FORMAT.search(text)) and not _CONTEXT.search(text)


def _kind(exc: openai.OpenAIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable"
    return "http_error"


def _retry_after(headers) -> float | None:
    """Retry-After / retry-after-ms as seconds, if given and reasonable (≤ 120 s, as the SDK)."""
    delay = None
    for header, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            delay = float(value) / divisor
            break
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                delay = float(email.utils.mktime_tz(parsed) - time.time())
                break
    if delay is not None and 0 < delay <= MAX_RETRY_AFTER:
        return delay
    return None


def _first_int(patterns, text: str) -> int | None:
    for pattern in patterns:
        if m := pattern.search(text):
            return int(m.group(1))
    return None


class _Clause:
    """An error's sentence said as the first clause of another (its full stop dropped), in the
    language of the sentence around it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error

    def say(self, lang: str | None) -> str:
        return localize(self.error, lang).rstrip().rstrip(".。")


def _display_host(base_url: str) -> str:
    """host[:port] of the base URL — no user, password, path or query."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    if not parts.hostname:
        return phrase("llm_path.configured_host", port=port)
    return f"{parts.hostname}{port}"
