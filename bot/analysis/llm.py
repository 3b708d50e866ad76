"""The one door to the LLM: an OpenAI-compatible chat-completions endpoint (the only openai importer).

Retries are the SDK's: it retries 408/409/429/5xx, timeouts and connection errors
`max_retries` times with exponential backoff (0.5 s doubling up to 8 s, with jitter) and honours
`Retry-After` / `retry-after-ms` up to 120 s (openai/_base_client.py: `_should_retry`,
`_calculate_retry_timeout`). So this module never sleeps; it bounds concurrency, remembers an
endpoint that rejects JSON mode, and turns every failure into one sentence without secrets.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from typing import AsyncIterator, Sequence
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI

from .. import metrics
from ..models import BotError

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Keyless local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
KEYLESS_PLACEHOLDER = "no-key"
RETRIED_STATUSES = frozenset({408, 409, 429})  # plus every 5xx: what the SDK retries
SERVER_MESSAGE_CHARS = 160
# Anything shaped like an API key in a server's error message (OpenAI echoes a masked one).
KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key)-[A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)

Message = dict[str, str]


class LLMError(BotError):
    """The LLM endpoint failed after the SDK's retries; the message is one sentence, no secrets."""


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str  # "stop", "length", "content_filter", … ("" when the endpoint gave none)


class LLM:
    """An OpenAI-compatible endpoint with one concurrency bound for every request."""

    def __init__(self, settings):
        self.model: str = settings.llm_model
        self.max_prompt_tokens: int = settings.llm_max_prompt_tokens
        self.max_output_tokens: int = settings.llm_max_output_tokens
        self._timeout: float = settings.llm_timeout
        self._max_retries: int = settings.llm_max_retries
        base_url = settings.openai_base_url or DEFAULT_BASE_URL
        self._host = _display_host(base_url)
        self._api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        # base_url and api_key are always passed explicitly so the SDK never reads the environment.
        self._client = AsyncOpenAI(base_url=base_url, api_key=self._api_key or KEYLESS_PLACEHOLDER,
                                   max_retries=self._max_retries, timeout=self._timeout)
        self._slots = asyncio.Semaphore(settings.llm_concurrency)
        self._json_mode = True  # False once the endpoint has rejected response_format

    async def complete(self, messages: Sequence[Message], *, max_tokens: int,
                       json_mode: bool = True) -> Completion:
        """One chat completion; `json_mode` asks for a JSON object when the endpoint supports it."""
        async with self._slots:
            started = time.monotonic()
            try:
                result = await self._complete(list(messages), max_tokens, json_mode)
                metrics.count("llm_calls", purpose="complete", outcome="ok")
                return result
            except openai.OpenAIError as exc:
                metrics.count("llm_calls", purpose="complete", outcome="error")
                raise self._error(exc) from None
            finally:
                metrics.observe("llm_seconds", time.monotonic() - started, purpose="complete")

    async def stream(self, messages: Sequence[Message], *, max_tokens: int) -> AsyncIterator[str]:
        """The answer's content deltas, in order. Close the generator (or read it to the end):
        it holds a concurrency slot while open."""
        async with self._slots:
            started = time.monotonic()
            try:
                response = await self._client.chat.completions.create(
                    model=self.model, messages=list(messages), max_tokens=max_tokens, stream=True)
                async with response:
                    async for chunk in response:
                        for choice in chunk.choices:
                            if choice.delta is not None and choice.delta.content:
                                yield choice.delta.content
                metrics.count("llm_calls", purpose="stream", outcome="ok")
            except openai.OpenAIError as exc:
                metrics.count("llm_calls", purpose="stream", outcome="error")
                raise self._error(exc) from None
            finally:
                metrics.observe("llm_seconds", time.monotonic() - started, purpose="stream")

    async def aclose(self) -> None:
        await self._client.close()

    # --- internals ----------------------------------------------------------------------------
    async def _complete(self, messages: list[Message], max_tokens: int, json_mode: bool) -> Completion:
        if not (json_mode and self._json_mode):
            return await self._create(messages, max_tokens, json_mode=False)
        try:
            return await self._create(messages, max_tokens, json_mode=True)
        except openai.BadRequestError:
            # Some compatible servers reject response_format. Ask once without it; if that works,
            # the 400 was about JSON mode: stop sending it for this client's lifetime.
            completion = await self._create(messages, max_tokens, json_mode=False)
            self._json_mode = False
            log.info("The LLM endpoint at %s rejects response_format; JSON mode is off from now on.",
                     self._host)
            return completion

    async def _create(self, messages: list[Message], max_tokens: int, *, json_mode: bool) -> Completion:
        extra = {"response_format": {"type": "json_object"}} if json_mode else {}
        response = await self._client.chat.completions.create(
            model=self.model, messages=messages, max_tokens=max_tokens, **extra)
        usage = getattr(response, "usage", None)
        if usage is not None:
            metrics.count("llm_tokens", getattr(usage, "prompt_tokens", 0) or 0, kind="prompt")
            metrics.count("llm_tokens", getattr(usage, "completion_tokens", 0) or 0, kind="completion")
        if not response.choices:
            return Completion(text="", finish_reason="")
        choice = response.choices[0]
        return Completion(text=choice.message.content or "", finish_reason=choice.finish_reason or "")

    def _error(self, exc: openai.OpenAIError) -> LLMError:
        error = LLMError(self._describe(exc))
        log.warning("%s", error)
        return error

    def _describe(self, exc: openai.OpenAIError) -> str:
        """One sentence for the reader; never the key, never the base URL's credentials."""
        if isinstance(exc, openai.APITimeoutError):
            return f"The LLM request timed out after {self._timeout:g} s{self._retried()}."
        if isinstance(exc, openai.APIConnectionError):
            return f"The LLM endpoint at {self._host} could not be reached{self._retried()}."
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retried = self._retried() if status in RETRIED_STATUSES or status >= 500 else ""
            detail = self._server_message(exc)
            return f"The LLM endpoint answered HTTP {status}{retried}{f' ({detail})' if detail else ''}."
        return f"The LLM request failed ({type(exc).__name__})."

    def _retried(self) -> str:
        if not self._max_retries:
            return ""
        return f" after {self._max_retries} {'retry' if self._max_retries == 1 else 'retries'}"

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
            message = message[:SERVER_MESSAGE_CHARS - 1] + "…"
        return message


def _display_host(base_url: str) -> str:
    """host[:port] of the base URL — no user, password, path or query."""
    parts = urlsplit(base_url)
    host = parts.hostname or "the configured host"
    return f"{host}:{parts.port}" if parts.port else host
