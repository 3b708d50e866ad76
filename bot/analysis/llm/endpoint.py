"""What the LLM client knows of its endpoint, and the budgets that follow from it.

- **The window.** A prompt is budgeted leaving the output its request needs
  (`prompt_budget(need)`), and `max_tokens` asks for at most what the prompt leaves. The window
  comes from the settings or a context-length refusal (client.py); `usage.prompt_tokens`
  calibrates the local estimate from the first answer on (the estimate follows the highest of the
  last answers' ratios: undercounting overflows the window, overcounting only wastes room).
- **Remembered per endpoint.** With a `memory` (the Redis store), the format step (the strongest
  structured-output level not refused), the window and the token ratio learnt are kept per
  (base URL, model) for ANALYSIS_TTL, so the next process neither probes a refused format nor
  overflows a known window again.

Its own module because it is arithmetic on counts, independent of how a request is sent: the
client (client.py) extends `Endpoint` and feeds it what the server says.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from settings import Settings

from ...core import metrics
from ...core.store import ANALYSIS_TTL
from ...diffs.tokens import estimate_tokens
from ..tokens_ratio import TokensRatio

log = logging.getLogger(__package__)  # the logger's name as before the split into a package

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
# A prompt refused for its length costs no output: callers rebuild it with the corrected
# estimate and send it again this many times (the second time covers a prompt whose text the
# server counts higher than the refused one's: a diff-heavy prompt teaches a low ratio).
CONTEXT_RETRIES = 2
MEMORY_TTL = ANALYSIS_TTL  # what is learnt about an endpoint is kept as long as its analyses

# Structured-output levels, strongest first.
JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT, PLAIN = range(4)
LEVEL_NAMES = ("json_schema", "json_object+schema", "json_object", "none")

Message = dict[str, str]


class Endpoint:
    """The window, the token ratio and the format floor of one endpoint, learnt and remembered."""

    def __init__(self, settings: Settings, memory: Any, base_url: str):
        self.model: str = settings.llm_model
        self._max_prompt_tokens: int = settings.llm_max_prompt_tokens
        self._max_output_tokens: int = settings.llm_max_output_tokens
        self.context_tokens: int | None = settings.llm_context_tokens
        self._floor = JSON_SCHEMA  # the strongest format this endpoint has not refused
        self._ratio = TokensRatio()  # the endpoint's tokens per locally estimated token, at most
        self._memory = memory  # a Store (get_json, set_json, k) or None
        self._memory_key = (
            memory.k("llm", "endpoint", hashlib.sha256(f"{base_url}\n{self.model}".encode()).hexdigest()[:16])
            if memory is not None
            else ""
        )
        self._recalled = memory is None
        self._saved: tuple | None = None  # the state last written to (or read from) memory
        self._locks: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = {}

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
