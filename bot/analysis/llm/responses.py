"""What comes back from an LLM endpoint, read without the SDK: the completion, the errors the
client raises, and the servers' own words parsed — a refused format, a context-length refusal
(window and prompt count, worded differently by each server), Retry-After, a server's message
with anything key-like withheld.

Its own module because none of it needs the openai SDK (client.py hands over status codes,
messages and bodies), and callers catching LLMError or ContextLengthError import nothing more.
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from ...core.models import BotError
from ...i18n import localize, phrase

SERVER_MESSAGE_CHARS = 160
# Anything shaped like an API key in a server's error message (OpenAI echoes a masked one).
KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key)-[A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)
MAX_RETRY_AFTER = 120.0  # seconds: a longer Retry-After is not waited for (as the SDK)

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


def error_text(message: str, body: object) -> str:
    """An SDK status error's text as the patterns below read it: its message and its body."""
    return f"{message} {body!s}"


def refuses_format(status: int, text: str) -> bool:
    """A 4xx, or a 5xx with a validation message (llama-cpp-python), that names the format."""
    if status in (401, 403, 404, 408, 409, 429) or (status >= 500 and status != 500):
        return False
    return bool(_NAMES_FORMAT.search(text)) and not _CONTEXT.search(text)


def context_overflow(status: int, text: str) -> tuple[int | None, int | None] | None:
    """(the window, the server's count of the prompt) a context-length refusal states — either
    None where it says nothing — or None when the error is no such refusal."""
    if not (400 <= status < 500 and _CONTEXT.search(text)):
        return None
    return _first_int(_WINDOW, text), _first_int(_PROMPT, text)


def server_message(body: object, api_key: str) -> str:
    """The server's own message from an error body, short, on one line, keys withheld ('' when
    it gave none)."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    message = str(body.get("message") or "").strip() if isinstance(body, dict) else ""
    if not message:
        return ""
    if api_key:
        message = message.replace(api_key, "[REDACTED]")
    message = KEY_LIKE.sub("[REDACTED]", message)
    message = " ".join(message.split()).rstrip(".")
    if len(message) > SERVER_MESSAGE_CHARS:
        message = message[: SERVER_MESSAGE_CHARS - 1] + "…"
    return message


def retry_after(headers) -> float | None:
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


class Clause:
    """An error's sentence said as the first clause of another (its full stop dropped), in the
    language of the sentence around it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error

    def say(self, lang: str | None) -> str:
        return localize(self.error, lang).rstrip().rstrip(".。")


def display_host(base_url: str) -> str:
    """host[:port] of the base URL — no user, password, path or query."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    if not parts.hostname:
        return phrase("llm_path.configured_host", port=port)
    return f"{parts.hostname}{port}"
