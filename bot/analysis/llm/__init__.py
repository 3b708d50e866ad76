"""The LLM client: an OpenAI-compatible chat-completions endpoint, by concern.

- client.py — `LLM`, the only module importing the openai SDK (lazily, at the first request: a
  process that asks the LLM nothing never imports it): requests, the structured-output step-down,
  retries, the breaker, blank answers, streams;
- endpoint.py — what is learnt of an endpoint (window, token ratio, format floor), the prompt and
  output budgets that follow, kept per endpoint in memory;
- responses.py — the completion, LLMError and ContextLengthError, and the servers' words parsed.

Callers import from here.
"""

from __future__ import annotations

from .client import (
    BACKOFF_MAX,
    BACKOFF_START,
    BLANK_RETRIES,
    BREAKER_FAILURES,
    BREAKER_SECONDS,
    DEFAULT_BASE_URL,
    KEYLESS_PLACEHOLDER,
    LLM,
    RETRIED_STATUSES,
    TIMEOUT_RETRIES,
)
from .endpoint import (
    ANALYSIS_OUTPUT_TOKENS,
    CONTEXT_MARGIN_TOKENS,
    CONTEXT_RETRIES,
    JSON_OBJECT,
    JSON_OBJECT_SCHEMA,
    JSON_SCHEMA,
    LEVEL_NAMES,
    MEMORY_TTL,
    MESSAGE_OVERHEAD_TOKENS,
    MIN_OUTPUT_TOKENS,
    OUTPUT_RESERVE,
    PLAIN,
    RATIO_SLACK,
    Message,
)
from .responses import KEY_LIKE, MAX_RETRY_AFTER, SERVER_MESSAGE_CHARS, Completion, ContextLengthError, LLMError

__all__ = [
    "LLM",
    "Completion",
    "LLMError",
    "ContextLengthError",
    "Message",
    "CONTEXT_RETRIES",
    "OUTPUT_RESERVE",
    "ANALYSIS_OUTPUT_TOKENS",
    "RATIO_SLACK",
    "MIN_OUTPUT_TOKENS",
    "CONTEXT_MARGIN_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "MEMORY_TTL",
    "JSON_SCHEMA",
    "JSON_OBJECT_SCHEMA",
    "JSON_OBJECT",
    "PLAIN",
    "LEVEL_NAMES",
    "DEFAULT_BASE_URL",
    "KEYLESS_PLACEHOLDER",
    "RETRIED_STATUSES",
    "TIMEOUT_RETRIES",
    "MAX_RETRY_AFTER",
    "BACKOFF_START",
    "BACKOFF_MAX",
    "BREAKER_FAILURES",
    "BREAKER_SECONDS",
    "BLANK_RETRIES",
    "KEY_LIKE",
    "SERVER_MESSAGE_CHARS",
]
