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

As a GitHub App (installations.py keeps its installation tokens), each call carries the token of the
repository owner's installation: the pooled clients' auth is set per call (`_InstallationAuth`),
and a 401 with a cached token drops it and asks once more. `AppRequests` is what the app asks as
itself, with its JWT (app_jwt.py): the installation of a repository, an installation token, the
app's own page.
"""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException, GithubIntegration
from github.Requester import Requester

from settings import Settings

from ...core import metrics
from ...core.links import GITHUB_LINKS
from ...core.models import BotError, NotFoundError, RateLimited, SourceError, Unreachable
from ...i18n import Phrase, phrase
from ..ratelimit import RETRIES, HostRetry, RateLimitGate, hhmm, rate_limit_reset

__all__ = [
    "AppRequests",
    "GitHubClient",
    "Github",
    "GithubException",
    "InstallationTokens",
    "RepoInfo",
    "rate_limit_reset",
]

log = logging.getLogger(__package__)  # the logger's name as before the split into a package

T = TypeVar("T")

PER_PAGE = 100  # list pages: GitHub's maximum, fewest requests
# PyGithub's default 0.25 s between requests (per client) would dominate a day's fetch; a small
# gap still keeps one worker from hammering GitHub in a tight pagination loop.
SECONDS_BETWEEN_REQUESTS = 0.05
REQUEST_TIMEOUT = 30  # seconds per HTTP request
JWT_ISSUED_BEFORE = 60  # a GitHub App's JWT: `iat` this far in the past (clock drift), …
JWT_LIFETIME = 540  # … and `exp` this long after now (GitHub's limit: 10 minutes after `iat`)


# --- the client --------------------------------------------------------------------------------


class InstallationTokens(Protocol):
    """A GitHub App's installation tokens (installations.py's `GitHubApp`)."""

    async def token(self, repo: str) -> str: ...

    async def drop(self, repo: str, token: str) -> None: ...

    async def installation(self, repo: str, *, fresh: bool = False) -> int: ...


class _InstallationAuth(Auth.Auth):
    """A pooled client's auth as a GitHub App: the installation token of the call in flight, set
    before each call (tokens are refreshed hourly, the client outlives them)."""

    def __init__(self) -> None:
        self.current = ""

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        return self.current

    @property
    def _masked_token(self) -> str:
        return "token ***"  # PyGithub logs this in place of the token


@dataclass(frozen=True)
class RepoInfo:
    full_name: str
    default_branch: str
    html_url: str


class GitHubClient:
    """One repository's client: its name as GitHub spells it, a pool of PyGithub clients, the
    rate-limit gate they share, and `_call` running a request in a worker thread."""

    def __init__(self, repo: str, settings: Settings, app: InstallationTokens | None = None):
        self.spec = repo  # as the user named it (commands and buttons reuse it)
        self.name = repo  # replaced by GitHub's own spelling once the repository is loaded
        self.cache_id = f"github:{repo.lower()}"
        self.web_url: str | None = _guess_web_url(settings.github_api_url, repo)
        self.links = GITHUB_LINKS
        self._api_url = settings.github_api_url.rstrip("/")
        self._app = app  # a GitHub App's installation tokens: GITHUB_TOKEN is then not used
        self._token = settings.github_token.get_secret_value() if settings.github_token and app is None else None
        self._concurrency = settings.github_fetch_concurrency
        self._gate = RateLimitGate(settings.github_max_rate_limit_wait, self._rate_exhausted)
        self._idle: queue.SimpleQueue[tuple[Github, _InstallationAuth | None]] = queue.SimpleQueue()
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._info: RepoInfo | None = None
        self._graphql_unavailable = False

    def close(self) -> None:
        """Close the pooled HTTP connections (optional; they also close with the process)."""
        while True:
            try:
                self._idle.get_nowait()[0].close()
            except queue.Empty:
                return

    # --- plumbing --------------------------------------------------------------------------------
    async def _repo_info(self) -> RepoInfo:
        if self._info is None:

            def fetch(gh: Github) -> RepoInfo:
                repo = gh.get_repo(self.name)
                repo.complete()  # GET /repos/{owner}/{name}
                return RepoInfo(repo.full_name, repo.default_branch, repo.html_url)

            try:
                info = await self._call(fetch, not_found=phrase("errors.no_repo_on_github", repo=self.name))
            except NotFoundError:
                if self._app is not None:  # the owner's installation may not cover this repository
                    await self._app.installation(self.name, fresh=True)  # raises the sentence if not
                raise
            self._info, self.name, self.web_url = info, info.full_name, info.html_url
        return self._info

    @property
    def _authenticated(self) -> bool:
        """A token goes with every request (a personal token, or the app's installation token)."""
        return bool(self._token or self._app)

    async def _call(self, fn: Callable[[Github], T], *, not_found: Phrase, kind: str = "rest") -> T:
        """Run `fn` with a pooled client in a worker thread, at most `github_fetch_concurrency` at
        once, and turn every failure into one sentence."""
        metrics.count("github_requests", kind=kind)
        async with self._slot():
            if (delay := self._gate.seconds_left()) > 0:
                await asyncio.sleep(delay)  # a rate limit is being waited out: don't add requests
            try:
                return await self._run(fn)
            except (GithubException, requests.RequestException) as exc:
                raise self._explain(exc, not_found) from None
            except BotError:
                raise  # already one sentence (e.g. the rate-limit bound, raised by HostRetry)
            except Exception as exc:  # PyGithub tripping over an odd answer: log it, say it once
                log.exception("Unexpected failure talking to GitHub about %s", self.name)
                raise SourceError(phrase("errors.github_unreadable", repo=self.name, kind=type(exc).__name__)) from None

    async def _run(self, fn: Callable[[Github], T]) -> T:
        """`fn` in a worker thread; as a GitHub App with the installation's token, and once more
        with a new one when GitHub answers 401 to the cached one (revoked, or expired early)."""
        if self._app is None:
            return await asyncio.to_thread(self._with_client, fn, None)
        token = await self._app.token(self.name)
        try:
            return await asyncio.to_thread(self._with_client, fn, token)
        except GithubException as exc:
            if exc.status != 401:
                raise
        await self._app.drop(self.name, token)
        return await asyncio.to_thread(self._with_client, fn, await self._app.token(self.name))

    def _with_client(self, fn: Callable[[Github], T], token: str | None) -> T:
        """In the worker thread: borrow a client and give it back only when this thread is done
        with it (a cancelled await leaves the thread running; its client must stay private)."""
        gh, auth = self._borrow()
        if auth is not None and token is not None:
            auth.current = token
        try:
            return fn(gh)
        finally:
            remaining, _ = gh.requester.rate_limiting  # from the last answer's headers; no request
            if remaining >= 0:
                metrics.gauge("github_rate_remaining", remaining)
            self._idle.put((gh, auth))

    def _slot(self) -> asyncio.Semaphore:
        # asyncio primitives belong to one event loop; a source may outlive one (tests, CLI runs).
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots, self._slots_loop = asyncio.Semaphore(self._concurrency), loop
        return self._slots

    def _borrow(self) -> tuple[Github, _InstallationAuth | None]:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return self._new_client()

    def _new_client(self) -> tuple[Github, _InstallationAuth | None]:
        installation = _InstallationAuth() if self._app is not None else None
        auth: Auth.Auth | None = installation or (Auth.Token(self._token) if self._token else None)
        return Github(
            base_url=self._api_url,
            auth=auth,
            per_page=PER_PAGE,
            timeout=REQUEST_TIMEOUT,
            user_agent="digest-bot",
            retry=HostRetry(gate=self._gate),
            seconds_between_requests=SECONDS_BETWEEN_REQUESTS,
            lazy=True,  # no request until we ask for one: get_repo()/get_commit() only build URLs
        ), installation

    def _rate_exhausted(self, until: float) -> SourceError:
        advice = phrase("errors.github_advice_later" if self._authenticated else "errors.github_advice_token")
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
            if self._app is not None:  # a new installation token was refused too
                return SourceError(phrase("errors.github_app_token_refused", repo=self.name))
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


# --- a GitHub App's own requests (with its JWT) --------------------------------------------------


class AppRequests:
    """What a GitHub App asks as itself, signed with its JWT (PyGithub's `GithubIntegration`):
    the installation covering a repository, an installation token, the app's own page. A fresh
    client per call (they are rare: an owner's installation once a day, a token once an hour),
    so no client is shared between threads. Failures come out as one sentence."""

    def __init__(self, api_url: str, app_id: str, sign: Callable[[dict[str, Any]], str]):
        self.api_url = api_url.rstrip("/")
        self._auth = Auth.AppAuth(app_id, sign_func=sign, jwt_expiry=JWT_LIFETIME, jwt_issued_at=-JWT_ISSUED_BEFORE)

    def installation(self, owner: str, repo: str) -> int | None:
        """GET /repos/{owner}/{repo}/installation: the installation's id, None when the app is not
        installed there (GitHub's 404)."""
        try:
            return int(self._call(lambda gi: gi.get_repo_installation(owner, repo).id))
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise self._explain(exc) from None

    def access_token(self, installation_id: int) -> tuple[str, float] | None:
        """POST /app/installations/{id}/access_tokens: (the token, when it expires as epoch seconds);
        None when the installation is gone (uninstalled, or installed again under a new id). Its
        length is GitHub's business (tokens grew in 2026): never checked."""
        try:
            granted = self._call(lambda gi: gi.get_access_token(installation_id))
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise self._explain(exc) from None
        return granted.token, granted.expires_at.timestamp()

    def install_page(self) -> str | None:
        """GET /app: the app's page (`html_url`, …/apps/<slug>), None when it cannot be read."""
        try:
            app = self._call(lambda gi: gi.get_app())
        except (GithubException, BotError):
            return None
        return str(app.html_url) if app.html_url else None

    def _call(self, fn: Callable[[GithubIntegration], T]) -> T:
        gi = GithubIntegration(
            auth=self._auth,
            base_url=self.api_url,
            timeout=REQUEST_TIMEOUT,
            user_agent="digest-bot",
            retry=HostRetry(),
            seconds_between_requests=None,
            lazy=True,
        )
        try:
            return fn(gi)
        except requests.RequestException as exc:
            host = urlsplit(self.api_url).hostname or self.api_url
            key = "errors.github_timed_out" if isinstance(exc, requests.Timeout) else "errors.github_unreachable"
            raise Unreachable(phrase(key, host=host, retries=RETRIES)) from None
        finally:
            gi.close()

    def _explain(self, exc: GithubException) -> BotError:
        """A 401 is the JWT refused: a wrong key or app id, or a clock far off (GitHub says which
        in its message, quoted; never the JWT)."""
        message = _github_message(exc) or "-"
        if exc.status == 401:
            return SourceError(phrase("errors.github_app_rejected", message=message))
        if exc.status >= 500:
            return SourceError(phrase("errors.github_failing", status=exc.status, retries=RETRIES))
        return SourceError(phrase("errors.github_http", status=exc.status, repo="GitHub App", message=message))
