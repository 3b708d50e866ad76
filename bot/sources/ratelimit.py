"""Rate limits and retries of a host's REST client, shared by every host whose SDK speaks through
`requests` (PyGithub for GitHub, python-gitlab for GitLab): one policy, not one per SDK.

Retries are ours, not the SDK's: PyGithub's GithubRetry caps each single rate-limit wait but not
their total, sleeps on `Retry-After` without any cap, and lets every thread discover the same
limit on its own; python-gitlab sleeps on `Retry-After` or `RateLimit-Reset` without any cap too.
`HostRetry` (an urllib3 Retry, handed to `requests`) retries connection failures and 5xx a few
times with backoff, and sends rate limits (403/429 with rate-limit headers) to one `RateLimitGate`
per source: every worker waits for the same reset, and no wait exceeds the host's bound
(GITHUB_MAX_RATE_LIMIT_WAIT, GITLAB_MAX_RATE_LIMIT_WAIT) — a reset beyond that fails at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

from ..core.models import SourceError

log = logging.getLogger(__name__)

RETRIES = 3  # connection failures and 5xx
RETRY_BACKOFF = 0.25  # urllib3: 0 s, then 0.5 s, 1 s ...
MAX_RATE_LIMIT_RETRIES = 10  # guards against a server that keeps limiting with a zero wait
RESET_SLACK = 0.5  # seconds after a reset time: our clock and the host's may differ slightly
SECONDARY_DEFAULT_WAIT = 60.0  # GitHub: "wait at least one minute" when it says nothing more


class RateLimitGate:
    """Shared by every worker of one source. A rate-limited response closes the gate until the
    reset; all workers wait for it to open. No wait may exceed the bound: a reset further away
    fails at once. (The bound is per wait, not per source lifetime: a long-running bot keeps one
    source per repository for days and must still wait out an ordinary hourly reset.)"""

    def __init__(self, bound: float, exhausted: Callable[[float], SourceError], host: str = "GitHub"):
        self._lock = threading.Lock()
        self._open_at = 0.0  # epoch seconds
        self._bound = bound
        self._exhausted = exhausted  # the sentence (a RateLimited) for a reset beyond the bound
        self._host = host

    def close_until(self, until: float) -> None:
        with self._lock:
            if until <= self._open_at:
                return  # another worker already closed the gate at least this long
            if until - time.time() > self._bound:
                raise self.exhausted(until)
            self._open_at = until
        log.warning(
            "%s rate limit reached; waiting %.1f s (until %s UTC).",
            self._host,
            until - time.time(),
            hhmm(until, seconds=True),
        )

    def seconds_left(self) -> float:
        return max(0.0, self._open_at - time.time())

    def wait(self) -> bool:
        """Block until the gate opens; True if it was closed."""
        delay = self.seconds_left()
        if delay > 0:
            time.sleep(delay)
        return delay > 0

    def exhausted(self, until: float) -> SourceError:
        log.warning(
            "%s rate limit exhausted until %s UTC (more than %g s away): not waiting.",
            self._host,
            hhmm(until, seconds=True),
            self._bound,
        )
        return self._exhausted(until)


def hhmm(epoch: float, seconds: bool = False) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S" if seconds else "%H:%M")


def rate_limit_reset(status: int, headers: Any, now: float) -> float | None:
    """When a rate-limited response may be retried (epoch seconds), or None if it is no rate limit.
    `Retry-After` first (GitHub's secondary limit, GitLab's 429); then a spent quota with its reset
    time — GitHub's `X-RateLimit-Remaining: 0` + `X-RateLimit-Reset`, GitLab's `RateLimit-Remaining:
    0` + `RateLimit-Reset`; a bare 429 means at least a minute."""
    retry_after = (headers.get("Retry-After") or "").strip()
    if retry_after.isdigit():
        return now + int(retry_after)
    for prefix in ("X-RateLimit-", "RateLimit-"):
        reset = (headers.get(prefix + "Reset") or "").strip()
        if headers.get(prefix + "Remaining") == "0" and reset.isdigit():
            return max(now, float(reset)) + RESET_SLACK
    if status == 429:
        return now + SECONDARY_DEFAULT_WAIT
    return None


class HostRetry(Retry):
    """urllib3's retry policy for one client: connection errors and 5xx `RETRIES` times with
    exponential backoff; rate limits through the shared gate; any other 403 is returned as is."""

    def __init__(
        self, gate: RateLimitGate | None = None, rate_limit_retries: int = MAX_RATE_LIMIT_RETRIES, **kwargs: Any
    ):
        self.gate = gate or RateLimitGate(0.0, lambda until: SourceError("rate limited"))
        self.rate_limit_retries = rate_limit_retries
        kwargs.setdefault("total", None)
        kwargs.setdefault("connect", RETRIES)
        kwargs.setdefault("read", RETRIES)
        kwargs.setdefault("status", RETRIES)
        kwargs.setdefault("other", 0)
        kwargs.setdefault("status_forcelist", (500, 502, 503, 504))
        kwargs.setdefault("allowed_methods", frozenset({"GET", "HEAD"}))
        kwargs.setdefault("backoff_factor", RETRY_BACKOFF)
        kwargs.setdefault("backoff_max", 8.0)
        kwargs.setdefault("raise_on_status", False)  # give the SDK the last response to report
        kwargs.setdefault("respect_retry_after_header", False)  # rate-limit waits go through the gate
        super().__init__(**kwargs)

    def new(self, **kwargs: Any) -> HostRetry:
        kwargs.setdefault("gate", self.gate)
        kwargs.setdefault("rate_limit_retries", self.rate_limit_retries)
        return super().new(**kwargs)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in (403, 429):
            return self._is_method_retryable(method)  # increment() decides from the headers
        return super().is_retry(method, status_code, has_retry_after)

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> HostRetry:
        if response is None or response.status not in (403, 429):
            return super().increment(method, url, response, error, _pool, _stacktrace)
        until = rate_limit_reset(response.status, response.headers, time.time())
        if until is None:  # a real 403 (permissions, SSO): hand the response back unchanged
            raise MaxRetryError(_pool, url or "", ResponseError(f"HTTP {response.status}"))
        if self.rate_limit_retries <= 0:
            response.drain_conn()
            raise self.gate.exhausted(until)
        try:
            self.gate.close_until(until)
        except SourceError:
            response.drain_conn()
            raise
        return self.new(rate_limit_retries=self.rate_limit_retries - 1)

    def sleep(self, response: Any = None) -> None:
        if not self.gate.wait():
            self._sleep_backoff()
