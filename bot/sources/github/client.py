"""The REST client of a GitHub (or GitHub Enterprise) source: the only module importing PyGithub.

PyGithub is synchronous, so every call runs in a worker thread (`asyncio.to_thread`). Its
Requester is NOT thread-safe: its connection object stores the request's verb/URL/headers on
itself in `request()` and reads them back in `getresponse()`, so two threads sharing one client can
swap each other's requests. Each worker therefore borrows its own `Github` client from a small pool
(at most `github_fetch_concurrency` clients, one per request in flight); PyGithub objects never
cross from one client to another.

Retries are ours, not PyGithub's GithubRetry (bot/sources/ratelimit.py, shared with GitLab):
`HostRetry` (an urllib3 Retry, which PyGithub hands to requests) retries connection failures and
5xx a few times with backoff, and sends rate limits (403/429 with rate-limit headers) to one
`RateLimitGate` per source: every worker waits for the same reset, and no wait exceeds
`github_max_rate_limit_wait` — a reset beyond that fails at once.

`GitHubClient` holds the pool, the gate and the repository's identity, and turns every failure
into one sentence (`_call`); what is asked of GitHub is in source.py, whose `GitHubSource`
extends it and takes `Github` and `GithubException` from here.
"""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException
from github.Requester import Requester

from settings import Settings

from ...core import metrics
from ...core.links import GITHUB_LINKS
from ...core.models import BotError, NotFoundError, RateLimited, SourceError, Unreachable
from ...i18n import Phrase, phrase
from ..ratelimit import RETRIES, HostRetry, RateLimitGate, hhmm, rate_limit_reset

__all__ = ["GitHubClient", "Github", "GithubException", "RepoInfo", "rate_limit_reset"]

log = logging.getLogger(__package__)  # the logger's name as before the split into a package

T = TypeVar("T")

PER_PAGE = 100  # list pages: GitHub's maximum, fewest requests
# PyGithub's default 0.25 s between requests (per client) would dominate a day's fetch; a small
# gap still keeps one worker from hammering GitHub in a tight pagination loop.
SECONDS_BETWEEN_REQUESTS = 0.05
REQUEST_TIMEOUT = 30  # seconds per HTTP request


# --- the client --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepoInfo:
    full_name: str
    default_branch: str
    html_url: str


class GitHubClient:
    """One repository's client: its name as GitHub spells it, a pool of PyGithub clients, the
    rate-limit gate they share, and `_call` running a request in a worker thread."""

    def __init__(self, repo: str, settings: Settings):
        self.spec = repo  # as the user named it (commands and buttons reuse it)
        self.name = repo  # replaced by GitHub's own spelling once the repository is loaded
        self.cache_id = f"github:{repo.lower()}"
        self.web_url: str | None = _guess_web_url(settings.github_api_url, repo)
        self.links = GITHUB_LINKS
        self._api_url = settings.github_api_url.rstrip("/")
        self._token = settings.github_token.get_secret_value() if settings.github_token else None
        self._concurrency = settings.github_fetch_concurrency
        self._gate = RateLimitGate(settings.github_max_rate_limit_wait, self._rate_exhausted)
        self._idle: queue.SimpleQueue[Github] = queue.SimpleQueue()
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._info: RepoInfo | None = None
        self._graphql_unavailable = False

    def close(self) -> None:
        """Close the pooled HTTP connections (optional; they also close with the process)."""
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    # --- plumbing --------------------------------------------------------------------------------
    async def _repo_info(self) -> RepoInfo:
        if self._info is None:

            def fetch(gh: Github) -> RepoInfo:
                repo = gh.get_repo(self.name)
                repo.complete()  # GET /repos/{owner}/{name}
                return RepoInfo(repo.full_name, repo.default_branch, repo.html_url)

            info = await self._call(fetch, not_found=phrase("errors.no_repo_on_github", repo=self.name))
            self._info, self.name, self.web_url = info, info.full_name, info.html_url
        return self._info

    async def _call(self, fn: Callable[[Github], T], *, not_found: Phrase, kind: str = "rest") -> T:
        """Run `fn` with a pooled client in a worker thread, at most `github_fetch_concurrency` at
        once, and turn every failure into one sentence."""
        metrics.count("github_requests", kind=kind)
        async with self._slot():
            if (delay := self._gate.seconds_left()) > 0:
                await asyncio.sleep(delay)  # a rate limit is being waited out: don't add requests
            try:
                return await asyncio.to_thread(self._with_client, fn)
            except (GithubException, requests.RequestException) as exc:
                raise self._explain(exc, not_found) from None
            except BotError:
                raise  # already one sentence (e.g. the rate-limit bound, raised by HostRetry)
            except Exception as exc:  # PyGithub tripping over an odd answer: log it, say it once
                log.exception("Unexpected failure talking to GitHub about %s", self.name)
                raise SourceError(phrase("errors.github_unreadable", repo=self.name, kind=type(exc).__name__)) from None

    def _with_client(self, fn: Callable[[Github], T]) -> T:
        """In the worker thread: borrow a client and give it back only when this thread is done
        with it (a cancelled await leaves the thread running; its client must stay private)."""
        gh = self._borrow()
        try:
            return fn(gh)
        finally:
            remaining, _ = gh.requester.rate_limiting  # from the last answer's headers; no request
            if remaining >= 0:
                metrics.gauge("github_rate_remaining", remaining)
            self._idle.put(gh)

    def _slot(self) -> asyncio.Semaphore:
        # asyncio primitives belong to one event loop; a source may outlive one (tests, CLI runs).
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots, self._slots_loop = asyncio.Semaphore(self._concurrency), loop
        return self._slots

    def _borrow(self) -> Github:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return self._new_client()

    def _new_client(self) -> Github:
        return Github(
            base_url=self._api_url,
            auth=Auth.Token(self._token) if self._token else None,
            per_page=PER_PAGE,
            timeout=REQUEST_TIMEOUT,
            user_agent="digest-bot",
            retry=HostRetry(gate=self._gate),
            seconds_between_requests=SECONDS_BETWEEN_REQUESTS,
            lazy=True,  # no request until we ask for one: get_repo()/get_commit() only build URLs
        )

    def _rate_exhausted(self, until: float) -> SourceError:
        advice = phrase("errors.github_advice_later" if self._token else "errors.github_advice_token")
        return RateLimited(phrase("errors.github_rate_exhausted", until=hhmm(until), advice=advice), until)

    def _explain(self, exc: Exception, not_found: Phrase) -> Exception:
        """One sentence for the user. Never includes the token (PyGithub's exceptions don't
        carry request headers, and we only quote GitHub's own message)."""
        host = urlsplit(self._api_url).hostname or self._api_url
        if isinstance(exc, requests.RequestException):
            key = "errors.github_timed_out" if isinstance(exc, requests.Timeout) else "errors.github_unreachable"
            return Unreachable(phrase(key, host=host, retries=RETRIES))
        assert isinstance(exc, GithubException)
        status, message = exc.status, _github_message(exc)
        if status == 401:
            if self._token:
                return SourceError(phrase("errors.github_bad_token"))
            return SourceError(phrase("errors.github_unauthorized"))
        if status in (404, 422):
            return NotFoundError(not_found)
        if status in (403, 429) and Requester.isRateLimitError(message):
            return RateLimited(phrase("errors.github_rate_limited"))
        if status == 403:
            return SourceError(phrase("errors.github_forbidden", repo=self.name, message=message or "Forbidden"))
        if status >= 500:
            return SourceError(phrase("errors.github_failing", status=status, retries=RETRIES))
        return SourceError(phrase("errors.github_http", status=status, repo=self.name, message=message or "-"))


def _github_message(exc: GithubException) -> str:
    data = exc.data
    return str(data.get("message") or "") if isinstance(data, dict) else ""


def _guess_web_url(api_url: str, repo: str) -> str | None:
    """The repo's page before GitHub has told us its html_url: github.com for the public API,
    the same host for Enterprise (https://HOST/api/v3)."""
    parts = urlsplit(api_url)
    if parts.hostname == "api.github.com":
        return f"https://github.com/{repo}"
    if parts.hostname:
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/{repo}"
    return None
