"""What the LLM costs, seen and capped: each digest's tokens, the deployment's month, the line a
digest's parent message shows.

- **Per digest.** `metering()` opens a `Meter` in a context variable around one digest's build;
  the LLM client reports every answered request's `usage` here (`record`), and the builder
  notes each analysis as fresh or already made (`note_analysis`). Context variables follow the
  build into the tasks it starts (asyncio copies the context), and the Meter is one shared object,
  so concurrent analyses add into it, while another digest built at the same time in the same
  process has its own. A request made outside any build (Q&A, a watch) counts only for the month.
- **Per month.** `Budget` keeps the deployment's tokens in one Redis counter per calendar month
  (UTC): `{prefix}llm:tokens:YYYY-MM`, raised with INCRBY by every answered request of every
  process. With `LLM_MONTHLY_TOKEN_BUDGET` set, a request is not sent once the counter has reached
  it (the analysis uses the offline rules instead) until the first day of the next month. The
  check comes before each request, so requests already in flight when the counter crosses the
  budget still finish: the month may end a few requests over it, never more than
  LLM_CONCURRENCY per process.
- **Per workspace.** With `LLM_MONTHLY_TOKEN_BUDGET_PER_WORKSPACE` set, the tokens spent on behalf
  of one workspace of a multi-workspace platform (the scope `tenants.scope_of` gives its
  conversations, e.g. `slack:T0123`) are also counted in that workspace's month,
  `{prefix}llm:tokens:ws:{scope}:YYYY-MM`, and its requests are not sent once that count reaches
  the cap: its questions get the budget sentence (naming its workspace's budget) and the offline
  answer, its on-demand digests the offline rules. Other workspaces are unaffected and the
  deployment's budget still caps everything. "On behalf of" is the context variable
  `tenants.ACTING_FOR`, set where a conversation's request runs (questions, period questions,
  the on-demand digests it builds) and where an on-demand delivery runs. Scheduled pushes,
  watches and alerts are the deployment's: their builds are shared by every conversation
  subscribed to the repository, whatever workspace it is in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, date, datetime

from settings import Settings

from ..core import metrics
from ..core.models import BotError, Cost
from ..core.tenants import ACTING_FOR, SHARED
from ..i18n import text

log = logging.getLogger(__name__)

MONTH_TTL = 70 * 86400  # a month's counter outlives the month (read for /metrics), then goes


@dataclass
class Meter:
    """One digest's LLM spend while it is built."""

    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    fresh: int = 0  # analyses made for this digest
    cached: int = 0  # analyses that were made before (cache) or by another digest at the same moment
    budget_hit: bool = False  # some analysis or the headline went offline because the month's budget is spent
    workspace_budget_hit: bool = False  # … because the workspace's month (not the deployment's) is spent
    timeouts: int = 0  # LLM requests that timed out while it was built

    def cost(self, settings: Settings) -> Cost:
        return Cost(
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            calls=self.calls,
            analyses=self.fresh + self.cached,
            cached=self.cached,
            money=price(self.tokens_in, self.tokens_out, settings),
            timeouts=self.timeouts,
            timeout_seconds=settings.llm_timeout if self.timeouts else 0.0,
        )


METER: ContextVar[Meter | None] = ContextVar("digest_meter", default=None)


@contextmanager
def metering() -> Iterator[Meter]:
    """Count the LLM spend of everything run inside (and in the tasks it starts)."""
    meter = Meter()
    token = METER.set(meter)
    try:
        yield meter
    finally:
        METER.reset(token)


def record(tokens_in: int, tokens_out: int) -> None:
    """One answered LLM request's usage: into /metrics and the digest being built, if any."""
    metrics.count("llm_tokens", tokens_in, direction="in")
    metrics.count("llm_tokens", tokens_out, direction="out")
    if (meter := METER.get()) is not None:
        meter.tokens_in += tokens_in
        meter.tokens_out += tokens_out
        meter.calls += 1


def note_analysis(cached: bool) -> None:
    if (meter := METER.get()) is not None:
        if cached:
            meter.cached += 1
        else:
            meter.fresh += 1


def note_timeout() -> None:
    """An LLM request timed out (it is sent once more, or the commit falls back): the digest's
    cost line says so, so a digest that took twice the timeout longer is not a mystery."""
    if (meter := METER.get()) is not None:
        meter.timeouts += 1


def note_budget(workspace: bool = False) -> None:
    if (meter := METER.get()) is not None:
        if workspace:
            meter.workspace_budget_hit = True
        else:
            meter.budget_hit = True


def price(tokens_in: int, tokens_out: int, settings: Settings) -> float | None:
    """Tokens × the configured prices per million; None when neither price is set."""
    per_in = settings.llm_price_per_mtok_in
    per_out = settings.llm_price_per_mtok_out
    if per_in is None and per_out is None:
        return None
    return (tokens_in * (per_in or 0.0) + tokens_out * (per_out or 0.0)) / 1_000_000


def reused(cost: Cost | None, analyses: int) -> Cost | None:
    """The cost of a digest read whole from the cache: nothing now, every analysis cached, and
    what building it cost then."""
    if cost is None:
        return None
    return Cost(
        analyses=analyses,
        cached=analyses,
        money=None if cost.money is None else 0.0,
        earlier_tokens=cost.tokens if cost.earlier_tokens is None else cost.earlier_tokens,
    )


# --- what the reader sees -------------------------------------------------------------------------


def _n(value: int) -> str:
    return f"{value:,}"


def money_text(amount: float) -> str:
    return f"${amount:.4f}" if 0 < amount < 0.01 else f"${amount:,.2f}"


def cost_line(cost: Cost | None, lang: str) -> str | None:
    """`💰 12,345 tokens (10,000 in / 2,345 out) · $0.02 · 20 of 31 analyses cached (0 tokens)`."""
    if cost is None:
        return None
    line = text(lang, "cost.line", tokens=_n(cost.tokens), tokens_in=_n(cost.tokens_in), tokens_out=_n(cost.tokens_out))
    if cost.money is not None:
        line += text(lang, "cost.money", amount=money_text(cost.money))
    if cost.cached:
        line += text(lang, "cost.cached", cached=_n(cost.cached), analyses=_n(cost.analyses))
    if cost.earlier_tokens is not None:
        line += text(lang, "cost.earlier", earlier=_n(cost.earlier_tokens))
    if cost.timeouts:
        form = "one" if cost.timeouts == 1 else "other"
        line += text(lang, f"cost.timeouts.{form}", n=_n(cost.timeouts), seconds=f"{cost.timeout_seconds:g}")
    return line


def reset_label(day: date, lang: str) -> str:
    return text(lang, "cost.date", year=day.year, month=f"{day.month:02d}", day=f"{day.day:02d}")


def budget_notice(budget: int, resets_on: date, lang: str) -> str:
    """The digest's one sentence when the month's budget sent some of it offline."""
    return text(lang, "cost.budget_notice", budget=_n(budget), reset=reset_label(resets_on, lang))


def budget_said(meter: Meter, settings: Settings, now: datetime, lang: str) -> str:
    """The digest's budget sentence, said once whatever number of commits went offline: the
    deployment's month, else this workspace's, or "" when neither sent anything offline."""
    if meter.budget_hit:
        return budget_notice(settings.llm_monthly_token_budget or 0, first_of_next_month(now), lang)
    if meter.workspace_budget_hit:  # an on-demand digest of a workspace whose month is spent
        budget = _n(settings.llm_monthly_token_budget_per_workspace or 0)
        return text(
            lang, "cost.workspace_budget_notice", budget=budget, reset=reset_label(first_of_next_month(now), lang)
        )
    return ""


# --- the month ------------------------------------------------------------------------------------


def first_of_next_month(now: datetime) -> date:
    now = now.astimezone(UTC)
    return date(now.year + (now.month == 12), now.month % 12 + 1, 1)


class Budget:
    """The deployment's LLM tokens this calendar month (UTC), in Redis, and its cap; with
    `per_workspace`, each workspace's tokens and cap besides (module doc)."""

    def __init__(self, store, limit: int | None, clock: Callable[[], datetime], per_workspace: int | None = None):
        self.store = store
        self.limit = limit
        self.per_workspace = per_workspace
        self.clock = clock
        self._pending = 0  # tokens spent in this process and not yet added to the month's count
        self._pending_ws: dict[str, int] = {}  # the same, per workspace scope (with per_workspace)
        self._adding: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None  # one INCRBY at a time, per loop

    def key(self, now: datetime | None = None, scope: str = SHARED) -> str:
        """The deployment's month, or with a `scope` that workspace's."""
        month = (now or self.clock()).astimezone(UTC).strftime("%Y-%m")
        if scope:
            return self.store.k("llm", "tokens", "ws", scope, month)
        return self.store.k("llm", "tokens", month)

    def resets_on(self) -> date:
        return first_of_next_month(self.clock())

    async def spent(self, scope: str = SHARED) -> int:
        return int(await self.store.get_json(self.key(scope=scope)) or 0)

    async def over(self, scope: str = SHARED) -> str | None:
        """ "deployment" when the deployment's month reached its budget, else "workspace" when
        `scope`'s did, else None. A store that cannot answer does not stop the analysis (the
        digest has other ways to say Redis is down)."""
        try:
            if self.limit and await self.spent() >= self.limit:
                return "deployment"
            if scope and self.per_workspace and await self.spent(scope) >= self.per_workspace:
                return "workspace"
        except BotError as exc:
            log.warning("LLM budget check skipped: %s", exc)
        return None

    async def exhausted(self) -> bool:
        """True when a budget (the deployment's, or the current workspace's) is spent."""
        return await self.over(ACTING_FOR.get()) is not None

    async def spend(self, tokens: int) -> None:
        """Add `tokens` to the month's count (and to the current workspace's, when counted);
        returns once they are in it (or their addition failed), so a budget check after it counts
        them. Answers arriving while an addition is under way are added together by the next one
        (a digest's concurrent requests: one round trip for several, not one each): a caller
        finding nothing pending took the lock after the one that took its tokens had added them."""
        if tokens <= 0:
            return
        self._pending += tokens
        scope = ACTING_FOR.get() if self.per_workspace else SHARED
        if scope:
            self._pending_ws[scope] = self._pending_ws.get(scope, 0) + tokens
        loop = asyncio.get_running_loop()
        if self._adding is None or self._adding[0] is not loop:
            self._adding = (loop, asyncio.Lock())
        async with self._adding[1]:
            if not self._pending and not self._pending_ws:
                return  # added by the one before, with its own
            amount, self._pending = self._pending, 0
            scopes, self._pending_ws = self._pending_ws, {}
            total = None
            try:
                if amount:
                    total = await self.store.incr(self.key(), MONTH_TTL, amount)
                for each, spent in scopes.items():
                    await self.store.incr(self.key(scope=each), MONTH_TTL, spent)
            except BotError as exc:  # the request was answered; only the month's count misses it
                log.warning("LLM tokens not added to the month's count: %s", exc)
                return
        if total is not None:
            metrics.gauge("llm_tokens_month", total)

    async def refresh_gauge(self) -> None:
        """For a /metrics scrape: the month's total as Redis has it (every process's requests)."""
        metrics.gauge("llm_tokens_month", await self.spent())
