"""Commits and diffs of a GitHub (or GitHub Enterprise) repository, through PyGithub.

The only module importing PyGithub. PyGithub is synchronous, so every call runs in a worker
thread (`asyncio.to_thread`). Its Requester is NOT thread-safe: its connection object stores the
request's verb/URL/headers on itself in `request()` and reads them back in `getresponse()`, so two
threads sharing one client can swap each other's requests. Each worker therefore borrows its own
`Github` client from a small pool (at most `github_fetch_concurrency` clients, one per request in
flight); PyGithub objects never cross from one client to another.

Retries are ours, not PyGithub's GithubRetry: that one caps each single rate-limit wait but not
their total, sleeps on `Retry-After` without any cap, and lets every thread discover the same
limit on its own. `_GitHubRetry` (an urllib3 Retry, which PyGithub hands to requests) retries
connection failures and 5xx a few times with backoff, and sends rate limits (403/429 with
rate-limit headers) to one `_RateLimitGate` per source: every worker waits for the same reset,
and no wait exceeds `github_max_rate_limit_wait` — a reset beyond that fails at once.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException
from github.Requester import Requester
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

from ..core import metrics
from ..core.file_kinds import is_binary_path
from ..core.models import (
    BotError,
    Commit,
    FileChange,
    NotFoundError,
    PastCommit,
    RateLimited,
    SourceError,
    UsageError,
    Window,
)
from ..i18n import Phrase, phrase
from .message import split_message, strip_emails

log = logging.getLogger(__name__)

T = TypeVar("T")

PER_PAGE = 100  # list pages: GitHub's maximum, fewest requests
FILES_PER_PAGE = 300  # a commit's files: GitHub's maximum page (3000 files at most)
# PyGithub's default 0.25 s between requests (per client) would dominate a day's fetch; a small
# gap still keeps one worker from hammering GitHub in a tight pagination loop.
SECONDS_BETWEEN_REQUESTS = 0.05
REQUEST_TIMEOUT = 30  # seconds per HTTP request
RETRIES = 3  # connection failures and 5xx
RETRY_BACKOFF = 0.25  # urllib3: 0 s, then 0.5 s, 1 s ...
MAX_RATE_LIMIT_RETRIES = 10  # guards against a server that keeps limiting with a zero wait
RESET_SLACK = 0.5  # seconds after X-RateLimit-Reset: our clock and GitHub's may differ slightly
PR_BATCH = 50  # commits per GraphQL request for their PRs (well inside GitHub's node limits)
PR_CACHE = 5000  # PR bodies kept per repository source
SECONDARY_DEFAULT_WAIT = 60.0  # GitHub: "wait at least one minute" when it says nothing more
# The learned profile's reading (bot/taste), in few requests: changelog files live at the root or
# under these folders (listed recursively only below docs/ and doc/), releases are read at most
# RELEASE_PAGES pages deep, PR labels come PR_LABEL_BATCH PRs per GraphQL request.
NOTES_DIRS = {"docs": True, "doc": True, "changelogs": False}  # folder -> recursive
RELEASE_PAGES = 3
PR_LABEL_BATCH = 100
PR_LABELS_MAX = 2000
LABELS_PER_PR = 20
HISTORY_OVERREAD = 2  # history lists at most this many times `limit` commits (merges are skipped)

_STATUSES = {"added", "removed", "modified", "renamed", "copied"}  # "changed"/"unchanged" → modified


# --- rate limits -------------------------------------------------------------------------------


class _RateLimitGate:
    """Shared by every worker of one source. A rate-limited response closes the gate until the
    reset; all workers wait for it to open. No wait may exceed the bound: a reset further away
    fails at once. (The bound is per wait, not per source lifetime: a long-running bot keeps one
    source per repository for days and must still wait out an ordinary hourly reset.)"""

    def __init__(self, bound: float, has_token: bool):
        self._lock = threading.Lock()
        self._open_at = 0.0  # epoch seconds
        self._bound = bound
        self._has_token = has_token

    def close_until(self, until: float) -> None:
        with self._lock:
            if until <= self._open_at:
                return  # another worker already closed the gate at least this long
            if until - time.time() > self._bound:
                raise self.exhausted(until)
            self._open_at = until
        log.warning(
            "GitHub rate limit reached; waiting %.1f s (until %s UTC).", until - time.time(), _hhmm(until, seconds=True)
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
        advice = phrase("errors.github_advice_later" if self._has_token else "errors.github_advice_token")
        log.warning(
            "GitHub rate limit exhausted until %s UTC (more than %g s away): not waiting.",
            _hhmm(until, seconds=True),
            self._bound,
        )
        return RateLimited(phrase("errors.github_rate_exhausted", until=_hhmm(until), advice=advice), until)


def _hhmm(epoch: float, seconds: bool = False) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S" if seconds else "%H:%M")


def rate_limit_reset(status: int, headers: Any, now: float) -> float | None:
    """When a rate-limited response may be retried (epoch seconds), or None if it is no rate limit.
    GitHub: primary limit = 403/429 with X-RateLimit-Remaining 0 (wait for X-RateLimit-Reset);
    secondary = 403/429 with Retry-After; a bare 429 means at least a minute."""
    retry_after = (headers.get("Retry-After") or "").strip()
    if retry_after.isdigit():
        return now + int(retry_after)
    reset = (headers.get("X-RateLimit-Reset") or "").strip()
    if headers.get("X-RateLimit-Remaining") == "0" and reset.isdigit():
        return max(now, float(reset)) + RESET_SLACK
    if status == 429:
        return now + SECONDARY_DEFAULT_WAIT
    return None


class _GitHubRetry(Retry):
    """urllib3's retry policy for one client: connection errors and 5xx `RETRIES` times with
    exponential backoff; rate limits through the shared gate; any other 403 is returned as is."""

    def __init__(
        self, gate: _RateLimitGate | None = None, rate_limit_retries: int = MAX_RATE_LIMIT_RETRIES, **kwargs: Any
    ):
        self.gate = gate or _RateLimitGate(0.0, has_token=False)
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
        kwargs.setdefault("raise_on_status", False)  # give PyGithub the last response to report
        kwargs.setdefault("respect_retry_after_header", False)  # rate-limit waits go through the gate
        super().__init__(**kwargs)

    def new(self, **kwargs: Any) -> _GitHubRetry:
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
    ) -> _GitHubRetry:
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


# --- the source --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RepoInfo:
    full_name: str
    default_branch: str
    html_url: str


class GitHubSource:
    """`CommitSource` for "owner/name" on GitHub or GitHub Enterprise (`settings.github_api_url`)."""

    def __init__(self, repo: str, settings: Any):
        self.spec = repo  # as the user named it (commands and buttons reuse it)
        self.name = repo  # replaced by GitHub's own spelling once the repository is loaded
        self.cache_id = f"github:{repo.lower()}"
        self.web_url: str | None = _guess_web_url(settings.github_api_url, repo)
        self._api_url = settings.github_api_url.rstrip("/")
        self._token = settings.github_token.get_secret_value() if settings.github_token else None
        self._concurrency = settings.github_fetch_concurrency
        self._gate = _RateLimitGate(settings.github_max_rate_limit_wait, has_token=bool(self._token))
        self._idle: queue.SimpleQueue[Github] = queue.SimpleQueue()
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._info: _RepoInfo | None = None
        self._pr_bodies: dict[int, str] = {}  # filled in batches by prefetch_prs
        self._graphql_unavailable = False
        self._labels_unavailable_logged = False

    # --- CommitSource --------------------------------------------------------------------------
    async def default_branch(self) -> str:
        return (await self._repo_info()).default_branch

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        info = await self._repo_info()
        ref = branch or info.default_branch
        # PyGithub formats since/until without converting to UTC: pass UTC. GitHub's bounds are
        # inclusive, so `until` stops one second before the window's (exclusive) end.
        since, until = window.start_utc, window.end_utc - timedelta(seconds=1)

        def fetch(gh: Github) -> list[Commit]:
            listed = gh.get_repo(info.full_name).get_commits(sha=ref, since=since, until=until)
            return [_to_commit(info.full_name, c) for c in listed]

        commits = await self._call(fetch, not_found=phrase("errors.no_branch", branch=ref, repo=info.full_name))
        kept = [c for c in commits if window.contains(c.committed_at) and (include_merges or not c.is_merge)]
        return sorted(kept, key=lambda c: c.committed_at, reverse=True)

    async def get_files(self, sha: str) -> tuple[FileChange, ...]:
        sha = _require_ref(sha)

        def fetch(gh: Github) -> tuple[FileChange, ...]:
            commit = gh.get_repo(self.name).get_commit(sha, commit_files_per_page=FILES_PER_PAGE)
            commit.complete()  # the one GET /commits/{sha}; further pages follow its Link header
            return tuple(_to_file(f) for f in commit.files)

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=sha, repo=self.name))

    async def read_file(self, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref` (the default branch when None); None when it does not exist."""
        info = await self._repo_info()
        ref = ref or info.default_branch

        def fetch(gh: Github) -> str | None:
            content = gh.get_repo(info.full_name).get_contents(path, ref=ref)
            if isinstance(content, list):
                return None  # a directory
            return content.decoded_content.decode("utf-8", "replace")

        try:
            return await self._call(fetch, not_found=phrase("errors.no_file", path=path, repo=info.full_name))
        except NotFoundError:
            return None

    async def get_commit(self, ref: str) -> Commit:
        ref = _require_ref(ref)
        info = await self._repo_info()

        def fetch(gh: Github) -> Commit:
            commit = gh.get_repo(info.full_name).get_commit(ref, commit_files_per_page=FILES_PER_PAGE)
            commit.complete()
            return _to_commit(info.full_name, commit, detailed=True)

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=info.full_name))

    async def prefetch_prs(self, commits: list[Commit]) -> None:
        """The PR bodies of these commits, PR_BATCH commits per GraphQL request (the commits'
        `associatedPullRequests`) instead of one REST request per PR: a day costs at most one
        request per commit (its files) plus a few. Where GraphQL is unavailable (an old GitHub
        Enterprise, a token without it), `pr_description` keeps asking REST, one by one."""
        wanted = [c for c in commits if c.pr_number and c.pr_number not in self._pr_bodies]
        if not wanted or self._graphql_unavailable:
            return
        info = await self._repo_info()
        owner, name = info.full_name.split("/", 1)
        for start in range(0, len(wanted), PR_BATCH):
            batch = wanted[start : start + PR_BATCH]
            fields = " ".join(
                f'c{i}: object(oid: "{c.sha}") {{ ... on Commit {{ associatedPullRequests(first: 5) '
                f"{{ nodes {{ number body labels(first: 10) {{ nodes {{ name }} }} "
                f"closingIssuesReferences(first: 5) {{ nodes {{ number title }} }} }} }} }} }}"
                for i, c in enumerate(batch)
            )
            query = (
                "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { " + fields + " } }"
            )

            def fetch(gh: Github, query=query) -> dict:
                return gh.requester.graphql_query(query, {"owner": owner, "name": name})[1]

            try:
                data = await self._call(fetch, not_found=phrase("errors.no_graphql", url=self._api_url), kind="graphql")
            except BotError as exc:
                log.info("PR descriptions of %s come one by one (REST): %s", self.name, exc)
                self._graphql_unavailable = True
                return
            repo = (data.get("data") or {}).get("repository") or {}
            for i, _ in enumerate(batch):
                for node in ((repo.get(f"c{i}") or {}).get("associatedPullRequests") or {}).get("nodes") or []:
                    if isinstance(node, dict) and isinstance(node.get("number"), int):
                        labels = [
                            n.get("name", "")
                            for n in ((node.get("labels") or {}).get("nodes") or [])
                            if isinstance(n, dict)
                        ]
                        issues = [
                            (n.get("number"), n.get("title", ""))
                            for n in ((node.get("closingIssuesReferences") or {}).get("nodes") or [])
                            if isinstance(n, dict)
                        ]
                        self._remember_pr(node["number"], pr_context(labels, issues) + (node.get("body") or ""))

    def _remember_pr(self, number: int, body: str) -> None:
        self._pr_bodies[number] = body
        while len(self._pr_bodies) > PR_CACHE:
            self._pr_bodies.pop(next(iter(self._pr_bodies)))

    async def pr_description(self, number: int) -> str | None:
        if number in self._pr_bodies:
            return self._pr_bodies[number]

        def fetch(gh: Github) -> str | None:
            try:
                pull = gh.get_repo(self.name).get_pull(number)
                return pr_context([label.name for label in pull.labels], []) + (pull.body or "")
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise

        return await self._call(fetch, not_found=phrase("errors.no_pr", number=number, repo=self.name))

    async def pr_commit(self, number: int) -> Commit | None:
        """The commit PR #number landed as (its merge/squash commit), or None if not merged."""
        info = await self._repo_info()

        def fetch(gh: Github) -> str | None:
            try:
                pull = gh.get_repo(info.full_name).get_pull(number)
                return pull.merge_commit_sha if pull.merged else None
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise

        sha = await self._call(fetch, not_found=phrase("errors.no_pr", number=number, repo=info.full_name))
        return await self.get_commit(sha) if sha else None

    # --- history, for the learned profile (bot/taste) -------------------------------------------
    # One profile per repository and week costs: the commit before the week (1 request), the root
    # listing plus docs/, doc/, changelogs/ where present (≤ 4), each changelog file (≤ 40, usually 1),
    # releases (≤ RELEASE_PAGES), history (⌈limit / 100⌉ pages, more only past merges) and PR labels
    # (⌈PRs / PR_LABEL_BATCH⌉ GraphQL requests, at most 20).
    async def tip_before(self, before: datetime, branch: str | None = None) -> str | None:
        """The branch's newest commit committed before `before` (default branch); None if none."""
        info = await self._repo_info()
        ref = branch or info.default_branch
        # GitHub's `until` is inclusive and commit dates are whole seconds: the last whole second
        # before `before` (10:00:00 → 09:59:59; 10:00:00.5 → 10:00:00), in UTC.
        until = before.astimezone(UTC) - timedelta(seconds=1)
        if until.microsecond:
            until += timedelta(microseconds=1_000_000 - until.microsecond)
        params = {"sha": ref, "until": until.strftime("%Y-%m-%dT%H:%M:%SZ"), "per_page": 1}

        def fetch(gh: Github) -> str | None:
            url = f"{gh.get_repo(info.full_name).url}/commits"
            try:
                _, data = gh.requester.requestJsonAndCheck("GET", url, parameters=params)
            except GithubException as exc:
                if exc.status == 409:  # "Git Repository is empty."
                    return None
                raise
            first = data[0] if isinstance(data, list) and data else None
            return str(first["sha"]) if isinstance(first, dict) and first.get("sha") else None

        return await self._call(fetch, not_found=phrase("errors.no_branch", branch=ref, repo=info.full_name))

    async def list_paths(self, ref: str) -> list[str]:
        """Paths of the files at `ref` where changelogs live — the root, and docs/, doc/ (every
        level) and changelogs/ — in at most four requests, never the whole tree of a huge
        repository: the root's listing, then one git tree per such folder."""
        ref = _require_ref(ref)
        info = await self._repo_info()

        def fetch(gh: Github) -> list[str]:
            repo = gh.get_repo(info.full_name)
            root = repo.get_contents("", ref=ref)
            entries = root if isinstance(root, list) else [root]
            paths = [e.path for e in entries if e.type != "dir"]
            for entry in entries:
                recursive = NOTES_DIRS.get(entry.name.lower())
                if entry.type == "dir" and recursive is not None:
                    tree = repo.get_git_tree(entry.sha, recursive=recursive)
                    paths += [f"{entry.path}/{t.path}" for t in tree.tree if t.type == "blob"]
            return paths

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=info.full_name))

    async def history(self, ref: str, limit: int) -> list[PastCommit]:
        """Up to `limit` commits reachable from `ref`, newest first, merges left out, as the commits
        listing gives them: 100 a request, and no files (`paths` and `added` stay empty — a
        commit's files would cost one request each)."""
        ref = _require_ref(ref)
        info = await self._repo_info()
        most = HISTORY_OVERREAD * limit

        def fetch(gh: Github) -> list[PastCommit]:
            found: list[PastCommit] = []
            if limit <= 0:
                return found
            for listed, c in enumerate(gh.get_repo(info.full_name).get_commits(sha=ref), start=1):
                commit = _to_commit(info.full_name, c)
                if not commit.is_merge:
                    found.append(PastCommit(commit.sha, commit.committed_at, commit.title, commit.pr_number, ()))
                # Stop before the listing asks for a page we will not read.
                if len(found) >= limit or listed >= most:
                    break
            return found

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=info.full_name))

    async def release_bodies(self, before: datetime) -> list[str]:
        """The bodies of the GitHub Releases published before `before`, newest first; drafts and
        later releases left out (a profile as of a day reads nothing published after it). Each is
        headed by its version (`## v0.5.0`, from the tag) as a changelog's section is: a published
        release is released. At most RELEASE_PAGES pages of 100 (the newest releases)."""
        info = await self._repo_info()

        def fetch(gh: Github) -> list[tuple[datetime, str]]:
            kept = []
            for seen, release in enumerate(gh.get_repo(info.full_name).get_releases(), start=1):
                published = release.published_at
                if not release.draft and published is not None and published < before and release.body:
                    kept.append((published, _release_text(release.tag_name or "", release.body)))
                if seen >= RELEASE_PAGES * PER_PAGE:
                    break
            return kept

        kept = await self._call(fetch, not_found=phrase("errors.no_repo_on_github", repo=info.full_name))
        return [text for _, text in sorted(kept, key=lambda k: k[0], reverse=True)]

    async def pr_labels(self, numbers: list[int]) -> dict[int, list[str]]:
        """The label names of these PRs (the first PR_LABELS_MAX), PR_LABEL_BATCH per GraphQL
        request; a number that is no PR (an issue's) is left out. Where GraphQL is unavailable (no
        token, an Enterprise server without it, a token it refuses) nothing, logged once."""
        wanted = list(dict.fromkeys(n for n in numbers if isinstance(n, int) and n > 0))[:PR_LABELS_MAX]
        if not wanted or self._graphql_unavailable:
            return {}
        if not self._token:
            return self._labels_unavailable("GitHub's GraphQL API needs a token")
        info = await self._repo_info()
        owner, name = info.full_name.split("/", 1)
        found: dict[int, list[str]] = {}
        for start in range(0, len(wanted), PR_LABEL_BATCH):
            fields = " ".join(
                f"pr{n}: pullRequest(number: {n}) {{ labels(first: {LABELS_PER_PR}) {{ nodes {{ name }} }} }}"
                for n in wanted[start : start + PR_LABEL_BATCH]
            )
            query = (
                "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { " + fields + " } }"
            )

            def fetch(gh: Github, query=query) -> dict | int:
                # Not graphql_query(): it raises on any `errors` entry, and a batch whose numbers
                # include an issue's answers with partial data and NOT_FOUND errors.
                try:
                    _, data = gh.requester.requestJsonAndCheck(
                        "POST",
                        gh.requester.graphql_url,
                        input={"query": query, "variables": {"owner": owner, "name": name}},
                    )
                except GithubException as exc:
                    if exc.status in (401, 403, 404, 410):
                        return exc.status
                    raise
                return data if isinstance(data, dict) else {}

            data = await self._call(fetch, not_found=phrase("errors.no_graphql", url=self._api_url), kind="graphql")
            if isinstance(data, int):
                self._graphql_unavailable = True
                return self._labels_unavailable(f"GraphQL answered HTTP {data}")
            batch = _graphql_labels(data, info.full_name)
            if batch is None:
                return self._labels_unavailable("GraphQL cannot see the repository")
            found.update(batch)
        return found

    def _labels_unavailable(self, why: str) -> dict[int, list[str]]:
        if not self._labels_unavailable_logged:
            self._labels_unavailable_logged = True
            log.info("PR labels of %s are not read for its learned profile: %s.", self.name, why)
        return {}

    def close(self) -> None:
        """Close the pooled HTTP connections (optional; they also close with the process)."""
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    # --- plumbing --------------------------------------------------------------------------------
    async def _repo_info(self) -> _RepoInfo:
        if self._info is None:

            def fetch(gh: Github) -> _RepoInfo:
                repo = gh.get_repo(self.name)
                repo.complete()  # GET /repos/{owner}/{name}
                return _RepoInfo(repo.full_name, repo.default_branch, repo.html_url)

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
                raise  # already one sentence (e.g. the rate-limit bound, raised by _GitHubRetry)
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
            retry=_GitHubRetry(gate=self._gate),
            seconds_between_requests=SECONDS_BETWEEN_REQUESTS,
            lazy=True,  # no request until we ask for one: get_repo()/get_commit() only build URLs
        )

    def _explain(self, exc: Exception, not_found: Phrase) -> Exception:
        """One sentence for the user. Never includes the token (PyGithub's exceptions don't
        carry request headers, and we only quote GitHub's own message)."""
        host = urlsplit(self._api_url).hostname or self._api_url
        if isinstance(exc, requests.RequestException):
            key = "errors.github_timed_out" if isinstance(exc, requests.Timeout) else "errors.github_unreachable"
            return SourceError(phrase(key, host=host, retries=RETRIES))
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


# --- conversions (PyGithub objects → our models), run in the worker thread ---------------------


def pr_context(labels: list[str], issues: list[tuple[Any, str]]) -> str:
    """'Labels: bug, security' / 'Linked issues: #41 Crash on …' lines put before a PR's body (the
    same request brings them; the prompt shows them as part of the untrusted PR text)."""
    lines = []
    names = [n for n in labels if n]
    if names:
        lines.append("Labels: " + ", ".join(names))
    linked = [f"#{n} {t}".strip() for n, t in issues if n]
    if linked:
        lines.append("Linked issues: " + "; ".join(linked))
    return "\n".join(lines) + "\n\n" if lines else ""


def _to_commit(repo: str, c: Any, detailed: bool = False) -> Commit:
    """Only fields present in a list response are read: `c.sha` (not `c.commit.sha`, which costs a
    request), the git author/committer/message, parents and html_url."""
    git = c.commit
    title, body, pr_number, reverts = split_message(git.message)
    extra: dict[str, Any] = {}
    if detailed:  # a single-commit response also carries stats and the first page of files
        stats = c.stats
        files = c.raw_data.get("files") or []
        paginated = 'rel="next"' in str(c.raw_headers.get("link", ""))
        extra = {
            "additions": stats.additions,
            "deletions": stats.deletions,
            "files_changed": None if paginated else len(files),
        }
    return Commit(
        repo=repo,
        sha=c.sha,
        title=title,
        body=body,
        author=_display_name(git.author.name),
        committed_at=git.committer.date.astimezone(UTC),
        url=c.html_url,
        parents=tuple(p.sha for p in c.parents),
        pr_number=pr_number,
        reverts=reverts,
        **extra,
    )


_VERSION_IN_TAG = re.compile(r"v?\d+(?:\.\d+)+")


def _release_text(tag: str, body: str) -> str:
    """A release's body as a changelog's section: under its version when the tag carries one
    (`vllm-v0.5.1` → `## v0.5.1`), so its entries read as released; the body alone otherwise."""
    version = _VERSION_IN_TAG.search(tag)
    return f"## {version.group(0)}\n\n{body}" if version else body


def _graphql_labels(data: dict, repo: str) -> dict[int, list[str]] | None:
    """`{number: [label, …]}` from a batch's answer; None when the repository itself is not there.
    Unknown numbers (NOT_FOUND) are skipped; any other error fails the batch (rate limited …)."""
    errors = [e for e in data.get("errors") or [] if isinstance(e, dict)]
    repository = (data.get("data") or {}).get("repository")
    if not isinstance(repository, dict):
        if any(e.get("type") == "RATE_LIMITED" for e in errors):
            raise RateLimited(phrase("errors.github_rate_limited"))
        if not errors or all(e.get("type") == "NOT_FOUND" for e in errors):
            return None
        message = str(errors[0].get("message") or errors[0].get("type") or "-")
        raise SourceError(phrase("errors.github_http", status=200, repo=repo, message=message))
    found: dict[int, list[str]] = {}
    for alias, node in repository.items():
        if isinstance(node, dict) and alias.startswith("pr") and alias[2:].isdigit():
            names = [n.get("name") for n in ((node.get("labels") or {}).get("nodes") or []) if isinstance(n, dict)]
            found[int(alias[2:])] = [n for n in names if isinstance(n, str) and n]
    return found


def _require_ref(ref: str) -> str:
    # An empty ref would turn GET /commits/{ref} into the listing endpoint.
    ref = (ref or "").strip()
    if not ref:
        raise UsageError(phrase("errors.no_sha"))
    return ref


def _display_name(name: str | None) -> str:
    return strip_emails(name or "") or "unknown"


def _to_file(f: Any) -> FileChange:
    patch = f.patch
    additions, deletions = f.additions or 0, f.deletions or 0
    status = f.status if f.status in _STATUSES else "modified"
    # GitHub sends no patch for binary files (and counts no lines) and for huge diffs (with counts).
    binary = is_binary_path(f.filename) or (
        patch is None and additions == 0 and deletions == 0 and status not in ("renamed", "copied")
    )
    return FileChange(
        path=f.filename,
        status=status,
        additions=additions,
        deletions=deletions,
        patch=None if binary else patch,
        previous_path=f.previous_filename or None,
        binary=binary,
    )


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
