"""The REST client of a GitLab source (gitlab.com or self-managed): the only module importing
python-gitlab.

python-gitlab is synchronous, so every call runs in a worker thread (`asyncio.to_thread`), each
with a `Gitlab` client of its own from a small pool (at most GITLAB_FETCH_CONCURRENCY): a client
holds one `requests.Session`, which is not meant to be shared between threads.

Retries and rate limits are the GitHub source's (bot/sources/ratelimit.py): the session's adapter
carries `HostRetry`, which retries connection failures and 5xx, and sends a 429 (`Retry-After`, or
`RateLimit-Remaining: 0` with `RateLimit-Reset`) to one `RateLimitGate` per source — every worker
waits for the same reset, and a reset further away than GITLAB_MAX_RATE_LIMIT_WAIT fails at once.
python-gitlab's own 429 handling (sleeping as long as the server says, with no bound) never sees a
429: the adapter has answered it first.

Requests go through python-gitlab's `http_get`/`http_list` (its auth, URL building, pagination
by the `Link` header); the answers are GitLab's JSON, turned into our models by convert.py.
"""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import requests
from gitlab import Gitlab
from gitlab.exceptions import GitlabError, GitlabHttpError

from settings import Settings

from ...core import metrics
from ...core.links import GITLAB_LINKS
from ...core.models import BotError, NotFoundError, RateLimited, SourceError, Unreachable
from ...i18n import Phrase, phrase
from ..ratelimit import RETRIES, HostRetry, RateLimitGate, hhmm

__all__ = ["GitLabClient", "GitlabHttpError", "PER_PAGE", "Api"]

log = logging.getLogger(__name__)

T = TypeVar("T")

PER_PAGE = 100  # GitLab's most per page: fewest requests
REQUEST_TIMEOUT = 30  # seconds per HTTP request


class Api:
    """What a worker thread asks GitLab through: python-gitlab's `http_get`/`http_list` with the
    project's URL prefix (`/projects/group%2Fproject`)."""

    def __init__(self, gl: Gitlab, project: str):
        self.gl = gl
        self.prefix = f"/projects/{quote(project, safe='')}"

    def get(self, endpoint: str, /, **query: Any) -> Any:
        return self.gl.http_get(self.prefix + endpoint, query_data=query or None)

    def raw(self, endpoint: str, /, **query: Any) -> bytes:
        answer = self.gl.http_get(self.prefix + endpoint, query_data=query or None, raw=True, streamed=False)
        return answer.content if isinstance(answer, requests.Response) else b""

    def pages(self, endpoint: str, /, *, most: int | None = None, **query: Any) -> list[dict]:
        """Every item of a listing (pages of PER_PAGE, following GitLab's `Link: rel="next"`), at
        most `most`: no page is asked for beyond it."""
        query.setdefault("per_page", PER_PAGE)
        found: list[dict] = []
        for item in self.gl.http_list(self.prefix + endpoint, query_data=query, iterator=True):
            if isinstance(item, dict):
                found.append(item)
            if most is not None and len(found) >= most:
                break
        return found


class GitLabClient:
    """One project's client: its path as GitLab spells it, a pool of python-gitlab clients, the
    rate-limit gate they share, and `_call` running a request in a worker thread."""

    def __init__(self, project: str, settings: Settings):
        self.spec = f"gitlab:{project}"
        self.name = project  # replaced by GitLab's own path_with_namespace once the project is loaded
        self.cache_id = f"gitlab:{urlsplit(settings.gitlab_url).netloc.lower()}/{project.lower()}"
        self.base_url = settings.gitlab_url.rstrip("/")
        self.web_url: str | None = f"{self.base_url}/{project}"
        self.links = GITLAB_LINKS
        self.host = urlsplit(self.base_url).netloc.rpartition("@")[2] or self.base_url
        self._token = settings.gitlab_token.get_secret_value() if settings.gitlab_token else None
        self._concurrency = settings.gitlab_fetch_concurrency
        self._gate = RateLimitGate(settings.gitlab_max_rate_limit_wait, self._rate_exhausted, host="GitLab")
        self._idle: queue.SimpleQueue[Gitlab] = queue.SimpleQueue()
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._project: dict | None = None

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().session.close()
            except queue.Empty:
                return

    async def _info(self) -> dict:
        """GET /projects/:path — its id, path_with_namespace, default_branch, web_url."""
        if self._project is None:
            project = self.name
            info = await self._call(
                lambda api: api.get(""), not_found=phrase("errors.no_repo_on_gitlab", repo=project, host=self.host)
            )
            if not isinstance(info, dict):
                raise SourceError(phrase("errors.gitlab_unreadable", repo=project, kind=type(info).__name__))
            self._project = info
            self.name = str(info.get("path_with_namespace") or project)
            self.web_url = str(info.get("web_url") or self.web_url)
        return self._project

    async def _call(self, fn: Callable[[Api], T], *, not_found: Phrase) -> T:
        """Run `fn` with a pooled client in a worker thread, at most GITLAB_FETCH_CONCURRENCY at
        once, and turn every failure into one sentence."""
        metrics.count("gitlab_requests")
        async with self._slot():
            if (delay := self._gate.seconds_left()) > 0:
                await asyncio.sleep(delay)  # a rate limit is being waited out: don't add requests
            try:
                return await asyncio.to_thread(self._with_client, fn)
            except (GitlabError, requests.RequestException) as exc:
                raise self._explain(exc, not_found) from None
            except BotError:
                raise  # already one sentence (the rate-limit bound, raised by HostRetry)
            except Exception as exc:  # an odd answer python-gitlab or we trip over: log it, say it once
                log.exception("Unexpected failure talking to GitLab about %s", self.name)
                raise SourceError(phrase("errors.gitlab_unreadable", repo=self.name, kind=type(exc).__name__)) from None

    def _with_client(self, fn: Callable[[Api], T]) -> T:
        try:
            gl = self._idle.get_nowait()
        except queue.Empty:
            gl = self._new_client()
        try:
            return fn(Api(gl, self.name))
        finally:
            self._idle.put(gl)

    def _slot(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots, self._slots_loop = asyncio.Semaphore(self._concurrency), loop
        return self._slots

    def _new_client(self) -> Gitlab:
        session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(max_retries=HostRetry(gate=self._gate))
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return Gitlab(
            self.base_url,
            private_token=self._token,  # a project, group or personal access token: all go in PRIVATE-TOKEN
            timeout=REQUEST_TIMEOUT,
            per_page=PER_PAGE,
            user_agent="digest-bot",
            session=session,
        )

    def _rate_exhausted(self, until: float) -> SourceError:
        advice = phrase("errors.gitlab_advice_later" if self._token else "errors.gitlab_advice_token")
        return RateLimited(
            phrase("errors.gitlab_rate_exhausted", host=self.host, until=hhmm(until), advice=advice), until
        )

    def _explain(self, exc: Exception, not_found: Phrase) -> Exception:
        """One sentence for the user; never the token (python-gitlab's errors carry GitLab's message only)."""
        if isinstance(exc, requests.RequestException):
            key = "errors.gitlab_timed_out" if isinstance(exc, requests.Timeout) else "errors.gitlab_unreachable"
            return Unreachable(phrase(key, host=self.host, retries=RETRIES))
        assert isinstance(exc, GitlabError)
        status, message = exc.response_code or 0, str(exc.error_message or "")[:200]
        if status == 401:
            return SourceError(phrase("errors.gitlab_bad_token" if self._token else "errors.gitlab_unauthorized"))
        if status == 404:
            return NotFoundError(not_found)
        if status == 429:
            return RateLimited(phrase("errors.gitlab_rate_limited"))
        if status == 403:
            return SourceError(phrase("errors.gitlab_forbidden", repo=self.name, message=message or "Forbidden"))
        if status >= 500:
            return SourceError(phrase("errors.gitlab_failing", status=status, retries=RETRIES))
        return SourceError(phrase("errors.gitlab_http", status=status, repo=self.name, message=message or "-"))
