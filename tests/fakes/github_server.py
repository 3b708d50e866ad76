"""A fake GitHub REST API (v3) on 127.0.0.1, reached by the real PyGithub through GITHUB_API_URL.

It answers with the JSON shapes GitHub sends (the fields PyGithub parses), paginates like GitHub
(`per_page`, `page`, a `Link` header with absolute URLs on the same host), filters `since`/`until`
inclusively on the committer date, and can be told to fail: rate limits, 5xx, bad tokens.

    from tests.fakes.github_server import FakeFile, FakeGitHub

    with FakeGitHub() as gh:                        # FakeGitHub(prefix="/api/v3") for GitHub Enterprise
        gh.add_repo("octo/widgets")                 # default branch "main"
        sha = gh.add_commit("octo/widgets", "feat: add a knob (#12)",
                            committed_at=datetime(2026, 1, 28, 3, 0, tzinfo=timezone.utc),
                            files=[FakeFile("knob.py", "added", additions=10)])
        gh.add_pull("octo/widgets", 12, body="Why the knob exists.")
        settings = make_settings(github_api_url=gh.url)
        ...                                          # drive the code under test
        gh.count("GET", f"/repos/octo/widgets/commits/{sha}")   # how often that was fetched

Files: `add_file` puts a file on a branch name; `add_commit(..., contents={path: text | None})`
changes the tree a commit carries (None removes), so `contents/{path}?ref=<sha>` reads the file as
it stood at that commit, directories list (`contents/`, `contents/docs`) as GitHub lists them, and
`git/trees/{sha}[?recursive=1]` serves the tree SHAs those listings name. `add_release` adds a
GitHub Release (drafts are listed to authenticated callers only, as to GitHub's push users).
GraphQL answers the two query shapes the bot sends: commits' `associatedPullRequests` and
`prN: pullRequest(number: N)` with its labels and its files (`add_pull(files=…)`: path and
changeType), null plus a NOT_FOUND error for a number that is no PR.

Faults apply to the next N requests (optionally only those whose path contains a string, and
after letting `skip` of those through):
`fail_next(502, n=2)`, `rate_limit_next(reset_in=1)` (403 + X-RateLimit-Remaining: 0),
`secondary_limit_next(retry_after=1)` (429 + Retry-After). `accept_tokens("t1")` makes any other
token a 401 "Bad credentials". `latency` delays every answer; `max_in_flight` reports the most
requests seen at once. `requests` records every request (paths without the prefix; a GraphQL
request's query text in `body`).

A GitHub App: `enable_app(app_id, slug)` returns its `FakeApp` (tests/fakes/github_app.py): the
JWT checked with the app's public key, installations, installation tokens valid until their
`expires_at` and only for their installation's repositories; any other token is then refused.

The `fake_github` pytest fixture yields a started FakeGitHub (import it into the test module).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import pytest

from tests.fakes.github_app import FakeApp

AUTO = "auto"  # FakeFile.patch default: generate a hunk matching additions/deletions
DOCS = "https://docs.github.com/rest"
COMMITS_PER_PAGE, COMMITS_MAX_PER_PAGE = 30, 100  # GitHub's list defaults
FILES_PER_PAGE, FILES_MAX = 300, 3000  # a commit's files: 300 a page, 3000 at most
RELEASES_PER_PAGE, RELEASES_MAX_PER_PAGE = 30, 100


@dataclass
class FakeFile:
    """One changed file of a commit. `patch=None` means GitHub sends no patch (binary, too large)."""

    filename: str
    status: str = "modified"  # added | removed | modified | renamed | copied | changed | unchanged
    additions: int = 1
    deletions: int = 0
    patch: str | None = AUTO
    previous_filename: str | None = None

    def to_json(self, api: str, html: str, repo: str, sha: str) -> dict[str, Any]:
        blob = hashlib.sha1(f"{sha}:{self.filename}".encode()).hexdigest()
        data: dict[str, Any] = {
            "sha": blob,
            "filename": self.filename,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
            "changes": self.additions + self.deletions,
            "blob_url": f"{html}/{repo}/blob/{sha}/{self.filename}",
            "raw_url": f"{html}/{repo}/raw/{sha}/{self.filename}",
            "contents_url": f"{api}/repos/{repo}/contents/{self.filename}?ref={sha}",
        }
        patch = _auto_patch(self.additions, self.deletions) if self.patch == AUTO else self.patch
        if patch is not None:
            data["patch"] = patch
        if self.previous_filename:
            data["previous_filename"] = self.previous_filename
        return data


@dataclass
class FakeCommit:
    sha: str
    message: str
    author: str
    email: str
    authored_at: datetime
    committer: str
    committer_email: str
    committed_at: datetime
    parents: list[str]
    files: list[FakeFile]
    login: str | None
    order: int  # insertion order, the tie-breaker when committer dates are equal
    tree: dict[str, str] = field(default_factory=dict)  # path -> text: the files as of this commit


@dataclass
class FakeRepo:
    full_name: str
    default_branch: str
    private: bool
    id: int
    branches: dict[str, str] = field(default_factory=dict)  # name -> head sha
    commits: dict[str, FakeCommit] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    files: dict[tuple[str, str], str] = field(default_factory=dict)  # (branch, path) -> text
    releases: list[dict[str, Any]] = field(default_factory=list)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)  # tree sha -> {relative path: text}
    tags: dict[str, str] = field(default_factory=dict)  # name -> sha (lightweight tags)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the API prefix, e.g. /repos/octo/widgets/commits
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: str = ""  # the GraphQL query, for POST /graphql
    at: float = field(default_factory=time.time)  # when it arrived (epoch seconds)


@dataclass
class _Fault:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    remaining: int
    path_contains: str | None
    reset_in: float | None = None  # primary rate limit: X-RateLimit-Reset computed when sent
    skip: int = 0  # matching requests to let through first


class FakeGitHub:
    def __init__(self, prefix: str = "", html_url: str | None = None):
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self._html = html_url
        self.latency = 0.0  # seconds every answer waits (to make concurrency observable)
        self.requests: list[RecordedRequest] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._repos: dict[str, FakeRepo] = {}  # lower-cased full name -> repo
        self._faults: list[_Fault] = []
        self._tokens: set[str] = set()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None  # kept after stop() so URLs stay printable
        self.graphql = True  # False: answer /graphql with 404, as an Enterprise server without it
        self.app: FakeApp | None = None  # a GitHub App (enable_app)

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        assert self._port, "start() the fake first"
        return f"http://127.0.0.1:{self._port}"

    @property
    def url(self) -> str:
        """The API base URL to configure (GITHUB_API_URL), prefix included."""
        return self.origin + self.prefix

    @property
    def html_base(self) -> str:
        """Where html_url links point: github.com, or the server itself for an Enterprise prefix."""
        if self._html:
            return self._html
        return self.origin if self.prefix else "https://github.com"

    # --- data --------------------------------------------------------------------------------
    def add_repo(self, full_name: str, default_branch: str = "main", private: bool = False) -> FakeRepo:
        repo = FakeRepo(full_name, default_branch, private, next(self._ids))
        with self._lock:
            self._repos[full_name.lower()] = repo
        return repo

    def add_file(self, repo: str, path: str, text: str, ref: str | None = None) -> None:
        """A file served by GET /repos/{repo}/contents/{path} (the default branch unless `ref`)."""
        r = self._repo(repo)
        r.files[(ref or r.default_branch, path.strip("/"))] = text

    def add_branch(self, repo: str, name: str, at: str) -> None:
        self._repo(repo).branches[name] = at

    def add_tag(self, repo: str, name: str, at: str) -> None:
        """A tag served by GET /repos/{repo}/tags; commits, compare and contents resolve it too."""
        self._repo(repo).tags[name] = at

    def add_commit(
        self,
        repo: str,
        message: str,
        *,
        committed_at: datetime,
        authored_at: datetime | None = None,
        author: str = "Ada Lovelace",
        email: str = "ada@example.com",
        committer: str | None = None,
        committer_email: str | None = None,
        login: str | None = None,
        parents: list[str] | None = None,
        branch: str | None = None,
        files: list[FakeFile] | tuple[FakeFile, ...] = (),
        sha: str | None = None,
        contents: dict[str, str | None] | None = None,
    ) -> str:
        """Add a commit on `branch` (default: the default branch) and move the branch to it.
        Parents default to the branch's current head. `contents` changes the tree the commit
        carries (its first parent's, with these paths set; None removes one). Returns the SHA."""
        r = self._repo(repo)
        branch = branch or r.default_branch
        order = next(self._ids)
        sha = sha or hashlib.sha1(f"{r.full_name}\0{order}\0{message}".encode()).hexdigest()
        if parents is None:
            parents = [r.branches[branch]] if branch in r.branches else []
        tree = dict(r.commits[parents[0]].tree) if parents and parents[0] in r.commits else {}
        for path, text in (contents or {}).items():
            if text is None:
                tree.pop(path.strip("/"), None)
            else:
                tree[path.strip("/")] = text
        with self._lock:
            r.commits[sha] = FakeCommit(
                sha=sha,
                message=message,
                author=author,
                email=email,
                authored_at=authored_at or committed_at,
                committer=committer or author,
                committer_email=committer_email or email,
                committed_at=committed_at,
                parents=list(parents),
                files=list(files),
                login=login,
                order=order,
                tree=tree,
            )
            r.branches[branch] = sha
        return sha

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        title: str = "A pull request",
        body: str | None = None,
        state: str = "closed",
        merged: bool = True,
        user: str = "octocat",
        merge_commit_sha: str | None = None,
        labels: tuple[str, ...] = (),
        closes: tuple[tuple[int, str], ...] = (),
        files: list[FakeFile] | tuple[FakeFile, ...] = (),
    ) -> None:
        """A pull request; `closes` are the (number, title) of the issues it closes, `files` what
        it changes (GraphQL's `files`: path and changeType)."""
        r = self._repo(repo)
        r.pulls[number] = {
            "title": title,
            "body": body,
            "state": state,
            "merged": merged,
            "user": user,
            "merge_commit_sha": merge_commit_sha,
            "labels": list(labels),
            "files": list(files),
            "closes": list(closes),
        }

    def add_release(
        self,
        repo: str,
        tag_name: str,
        *,
        body: str | None,
        published_at: datetime | None,
        created_at: datetime | None = None,
        draft: bool = False,
        prerelease: bool = False,
        name: str | None = None,
        target: str | None = None,
    ) -> None:
        """A GitHub Release. A draft has no `published_at` (GitHub sends null) whatever is passed."""
        r = self._repo(repo)
        created = created_at or published_at
        assert created is not None, "a release needs created_at or published_at"
        with self._lock:
            r.releases.append(
                {
                    "id": next(self._ids),
                    "tag_name": tag_name,
                    "name": name if name is not None else tag_name,
                    "body": body,
                    "draft": draft,
                    "prerelease": prerelease,
                    "created_at": created,
                    "published_at": None if draft else published_at,
                    "target_commitish": target or r.default_branch,
                }
            )

    # --- behaviour ---------------------------------------------------------------------------
    def enable_app(self, app_id: str = "4242", slug: str = "digest-bot") -> FakeApp:
        """Serve a GitHub App: its JWT, installations and installation tokens (github_app.py)."""
        self.app = FakeApp(app_id, slug, self.html_base)
        return self.app

    def accept_tokens(self, *tokens: str) -> None:
        """Only these tokens are valid; any other Authorization gets 401 Bad credentials."""
        self._tokens = set(tokens)

    def fail_next(
        self,
        status: int,
        n: int = 1,
        *,
        headers: dict[str, str] | None = None,
        message: str | None = None,
        path_contains: str | None = None,
        skip: int = 0,
    ) -> None:
        """Answer the next `n` requests whose path contains `path_contains` (any, if None) — after
        letting `skip` of them through — with `status` and a GitHub-style error body."""
        body = {"message": message or _REASONS.get(status, "Error"), "documentation_url": DOCS, "status": str(status)}
        with self._lock:
            self._faults.append(_Fault(status, dict(headers or {}), body, n, path_contains, skip=skip))

    def rate_limit_next(
        self, n: int = 1, *, reset_in: float = 1.0, path_contains: str | None = None, skip: int = 0, status: int = 403
    ) -> None:
        """GitHub's primary rate limit: 403 (or 429 — GitHub documents both), X-RateLimit-Remaining:
        0, X-RateLimit-Reset (epoch seconds, between reset_in and reset_in + 1 s ahead when sent)."""
        body = {
            "message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
            "Authenticated requests get a higher rate limit. Check out the "
            "documentation for more details.)",
            "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
        }
        with self._lock:
            self._faults.append(_Fault(status, {}, body, n, path_contains, reset_in=reset_in, skip=skip))

    def heal(self) -> None:
        """GitHub answers normally again: every fault still queued is dropped."""
        with self._lock:
            self._faults.clear()

    def secondary_limit_next(
        self, n: int = 1, *, retry_after: int = 1, status: int = 429, path_contains: str | None = None, skip: int = 0
    ) -> None:
        """GitHub's secondary rate limit: 429 (or 403) with Retry-After."""
        body = {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        }
        with self._lock:
            self._faults.append(_Fault(status, {"Retry-After": str(retry_after)}, body, n, path_contains, skip=skip))

    # --- inspection --------------------------------------------------------------------------
    def count(self, method: str = "GET", path: str | None = None, *, startswith: str | None = None) -> int:
        """How many requests had exactly `path`, or a path starting with `startswith`."""
        return sum(
            1
            for r in list(self.requests)
            if r.method == method
            and (path is None or r.path == path)
            and (startswith is None or r.path.startswith(startswith))
        )

    # --- internals ---------------------------------------------------------------------------
    def _repo(self, name: str) -> FakeRepo:
        return self._repos[name.lower()]

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and (fault.path_contains is None or fault.path_contains in path):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    fault.remaining -= 1
                    return fault
        return None

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


_REASONS = {
    401: "Bad credentials",
    403: "Forbidden",
    404: "Not Found",
    422: "Unprocessable Entity",
    500: "Server Error",
    502: "Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _auto_patch(additions: int, deletions: int) -> str:
    lines = [f"@@ -1,{deletions} +1,{additions} @@"]
    lines += [f"-old line {i}" for i in range(deletions)]
    lines += [f"+new line {i}" for i in range(additions)]
    return "\n".join(lines)


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _blob_sha(text: str) -> str:
    raw = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    # Like real servers: no Nagle delay between the headers and the body (else every
    # response waits ~40 ms for a delayed ACK on loopback).
    disable_nagle_algorithm = True
    fake: FakeGitHub
    protocol_version = "HTTP/1.1"  # keep-alive, like GitHub (requests reuses connections)

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        path, query = split.path, dict(parse_qsl(split.query))
        if self.command == "POST" and path in ("/graphql", "/api/graphql"):
            return self._graphql(raw)
        if fake.prefix:
            if not (path == fake.prefix or path.startswith(fake.prefix + "/")):
                return self._send(404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"})
            path = path[len(fake.prefix) :] or "/"
        headers = {k.lower(): v for k, v in self.headers.items()}
        with fake._lock:
            fake.requests.append(RecordedRequest(self.command, path, query, headers))
        fake._enter()
        try:
            if fake.latency:
                time.sleep(fake.latency)
            status, body, extra = self._answer(path, query, headers)
        finally:
            fake._leave()
        self._send(status, body, extra)

    def _answer(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        fake = self.fake
        fault = fake._take_fault(path)
        if fault:
            extra = dict(fault.headers)
            if fault.reset_in is not None:
                extra.update(
                    {
                        "X-RateLimit-Limit": "60",
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Used": "60",
                        "X-RateLimit-Resource": "core",
                        "X-RateLimit-Reset": str(math.ceil(time.time() + fault.reset_in)),
                    }
                )
            return fault.status, fault.body, extra
        token = _token(headers.get("authorization", ""))
        parts = [p for p in path.split("/") if p]
        if fake.app is not None:
            refused = self._app_auth(fake.app, token, parts)
            if refused is not None:
                return refused
        elif token is not None and fake._tokens and token not in fake._tokens:
            return 401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}, {}
        if self.command != "GET":
            return _not_found()
        if len(parts) < 3 or parts[0] != "repos":
            return _not_found()
        repo = fake._repos.get(f"{parts[1]}/{parts[2]}".lower())
        if repo is None or (repo.private and token is None):
            return _not_found("https://docs.github.com/rest/repos/repos#get-a-repository")
        rest = parts[3:]
        if not rest:
            return 200, self._repo_json(repo), {}
        if rest == ["commits"]:
            return self._list_commits(repo, path, query)
        if len(rest) == 2 and rest[0] == "commits":
            return self._get_commit(repo, rest[1], path, query)
        if rest[0] == "contents":
            return self._contents(repo, "/".join(rest[1:]), query)
        if len(rest) == 3 and rest[:2] == ["git", "trees"]:
            return self._git_tree(repo, rest[2], query)
        if rest == ["releases"]:
            return self._list_releases(repo, path, query, token is not None)
        if rest == ["tags"]:
            return self._list_tags(repo, path, query)
        if rest == ["branches"]:
            return self._list_branches(repo, path, query)
        if len(rest) >= 2 and rest[0] == "compare":
            return self._compare(repo, unquote("/".join(rest[1:])), path, query)
        if len(rest) == 2 and rest[0] == "pulls" and rest[1].isdigit():
            pull = repo.pulls.get(int(rest[1]))
            if pull is None:
                return _not_found("https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
            return 200, self._pull_json(repo, int(rest[1]), pull), {}
        return _not_found()

    def _app_auth(self, app: FakeApp, token: str | None, parts: list[str]) -> tuple[int, Any, dict[str, str]] | None:
        """With a GitHub App: its JWT for its own endpoints (their answer), an installation token for
        its installation's repositories, a token from accept_tokens; anything else refused. None:
        go on serving the request."""
        bad = (401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}, {})
        own = parts[:1] == ["app"] or (len(parts) == 4 and parts[0] == "repos" and parts[3] == "installation")
        if token is not None and app.is_jwt(token):
            problem = app.check_jwt(token)
            if problem is not None:
                return 401, {"message": problem, "documentation_url": DOCS, "status": "401"}, {}
            answered = app.answer(self.command, parts) if own else None
            if answered is None:  # a JWT is only for the app's own endpoints
                return 403, {"message": "Resource not accessible by integration", "documentation_url": DOCS}, {}
            return answered
        if own:
            return 401, {"message": "A JSON web token could not be decoded", "documentation_url": DOCS}, {}
        if token is None:
            return None
        issued = app.installation_token(token)
        if issued is None:
            return None if token in self.fake._tokens else bad
        if issued.expires_at <= app.now():
            return bad
        if parts[:1] == ["repos"] and len(parts) >= 3 and not app.covers(issued, f"{parts[1]}/{parts[2]}"):
            return _not_found("https://docs.github.com/rest/repos/repos#get-a-repository")
        return None

    def _contents(self, repo: FakeRepo, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """A file: GitHub's file object, base64 content in 60-character lines, as the real API sends
        it. A directory (the root when `path` is empty): a JSON array of its entries. An unknown
        ref: 404 "No commit found for the ref"; a missing path: 404 "Not Found"."""
        doc = "https://docs.github.com/rest/repos/contents#get-repository-content"
        ref = query.get("ref") or repo.default_branch
        path = path.strip("/")
        tree = self._tree_at(repo, ref)
        if tree is None:
            return 404, {"message": f"No commit found for the ref {ref}", "documentation_url": doc, "status": "404"}, {}
        text = tree.get(path)
        if text is None:
            if path and not any(p.startswith(path + "/") for p in tree):
                return _not_found(doc)
            return 200, self._dir_entries(repo, tree, path, ref), {}
        raw = text.encode()
        encoded = base64.b64encode(raw).decode()
        sha = _blob_sha(text)
        api = f"{self.fake.url}/repos/{repo.full_name}/contents/{path}?ref={ref}"
        return (
            200,
            {
                "type": "file",
                "encoding": "base64",
                "size": len(raw),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "sha": sha,
                "url": api,
                "content": "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n",
                "html_url": f"{self.fake.html_base}/{repo.full_name}/blob/{ref}/{path}",
                "git_url": f"{self.fake.url}/repos/{repo.full_name}/git/blobs/{sha}",
                "download_url": f"{self.fake.html_base}/{repo.full_name}/raw/{ref}/{path}",
                "_links": {"self": api},
            },
            {},
        )

    def _tree_at(self, repo: FakeRepo, ref: str) -> dict[str, str] | None:
        """The files at `ref` (a branch, tag-less SHA or SHA prefix): the commit's tree, plus the
        files `add_file` put on that branch name; None when the ref names nothing."""
        sha = self._resolve(repo, ref)
        extra = {path: text for (branch, path), text in repo.files.items() if branch == ref}
        if sha is None and not extra:
            return None
        return {**(repo.commits[sha].tree if sha else {}), **extra}

    def _subtree(self, repo: FakeRepo, tree: dict[str, str], path: str) -> str:
        """The SHA of the directory `path` in `tree`, registered so that git/trees/{sha} serves it."""
        prefix = path + "/" if path else ""
        sub = {p[len(prefix) :]: t for p, t in tree.items() if p.startswith(prefix)}
        sha = hashlib.sha1(json.dumps(sorted(sub.items())).encode()).hexdigest()
        repo.trees.setdefault(sha, sub)
        return sha

    def _dir_entries(self, repo: FakeRepo, tree: dict[str, str], path: str, ref: str) -> list[dict[str, Any]]:
        api, html, full = self.fake.url, self.fake.html_base, repo.full_name
        prefix = path + "/" if path else ""
        kinds: dict[str, str] = {}
        for p in tree:
            if p.startswith(prefix):
                name, sep, _ = p[len(prefix) :].partition("/")
                kinds[name] = "dir" if sep else "file"
        out = []
        for name in sorted(kinds):
            full_path = prefix + name
            is_dir = kinds[name] == "dir"
            sha = self._subtree(repo, tree, full_path) if is_dir else _blob_sha(tree[full_path])
            url = f"{api}/repos/{full}/contents/{full_path}?ref={ref}"
            git = f"{api}/repos/{full}/git/{'trees' if is_dir else 'blobs'}/{sha}"
            page = f"{html}/{full}/{'tree' if is_dir else 'blob'}/{ref}/{full_path}"
            out.append(
                {
                    "type": kinds[name],
                    "size": 0 if is_dir else len(tree[full_path].encode()),
                    "name": name,
                    "path": full_path,
                    "sha": sha,
                    "url": url,
                    "git_url": git,
                    "html_url": page,
                    "download_url": None if is_dir else f"{html}/{full}/raw/{ref}/{full_path}",
                    "_links": {"self": url, "git": git, "html": page},
                }
            )
        return out

    def _git_tree(self, repo: FakeRepo, sha: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """GET git/trees/{sha}: a tree SHA a listing named (or a ref: GitHub accepts "the SHA1 value or
        ref name"); `recursive` with any value lists every level, trees included."""
        api, full = self.fake.url, repo.full_name
        files = repo.trees.get(sha)
        if files is None and (whole := self._tree_at(repo, sha)) is not None:
            files = whole
        if files is None:
            return _not_found("https://docs.github.com/rest/git/trees#get-a-tree")
        recursive = "recursive" in query
        entries: dict[str, dict[str, Any]] = {}
        for path in sorted(files):
            parts = path.split("/")
            for depth in range(1, len(parts)):
                if not recursive and depth > 1:
                    break
                sub = "/".join(parts[:depth])
                if sub not in entries:
                    tree_sha = self._subtree(repo, files, sub)
                    entries[sub] = {
                        "path": sub,
                        "mode": "040000",
                        "type": "tree",
                        "sha": tree_sha,
                        "url": f"{api}/repos/{full}/git/trees/{tree_sha}",
                    }
            if recursive or len(parts) == 1:
                blob = _blob_sha(files[path])
                entries[path] = {
                    "path": path,
                    "mode": "100644",
                    "type": "blob",
                    "sha": blob,
                    "size": len(files[path].encode()),
                    "url": f"{api}/repos/{full}/git/blobs/{blob}",
                }
        own = self._subtree(repo, files, "")
        return (
            200,
            {
                "sha": own,
                "url": f"{api}/repos/{full}/git/trees/{own}",
                "tree": [entries[k] for k in sorted(entries)],
                "truncated": False,
            },
            {},
        )

    def _list_releases(
        self, repo: FakeRepo, path: str, query: dict[str, str], authenticated: bool
    ) -> tuple[int, Any, dict[str, str]]:
        """Newest created first; drafts only for callers who could push (here: any token)."""
        shown = [r for r in repo.releases if authenticated or not r["draft"]]
        shown.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
        page, links = self._paginate(shown, path, query, RELEASES_PER_PAGE, RELEASES_MAX_PER_PAGE)
        return 200, [self._release_json(repo, r) for r in page], links

    def _release_json(self, repo: FakeRepo, r: dict[str, Any]) -> dict[str, Any]:
        api, html, full = self.fake.url, self.fake.html_base, repo.full_name
        url = f"{api}/repos/{full}/releases/{r['id']}"
        return {
            "url": url,
            "html_url": f"{html}/{full}/releases/tag/{r['tag_name']}",
            "assets_url": f"{url}/assets",
            "upload_url": f"{api}/repos/{full}/releases/{r['id']}/assets{{?name,label}}",
            "tarball_url": f"{api}/repos/{full}/tarball/{r['tag_name']}",
            "zipball_url": f"{api}/repos/{full}/zipball/{r['tag_name']}",
            "id": r["id"],
            "node_id": f"RE_{r['id']}",
            "tag_name": r["tag_name"],
            "target_commitish": r["target_commitish"],
            "name": r["name"],
            "body": r["body"],
            "draft": r["draft"],
            "prerelease": r["prerelease"],
            "created_at": _iso(r["created_at"]),
            "published_at": _iso(r["published_at"]) if r["published_at"] else None,
            "author": self._user_json("octocat"),
            "assets": [],
        }

    @staticmethod
    def _pull_node(query: str, number: int, pull: dict[str, Any]) -> dict[str, Any]:
        """A PullRequest node with the fields the query selects (GraphQL returns only those)."""
        node: dict[str, Any] = {"number": number, "body": pull["body"] or ""}
        if match := re.search(r"labels\(first: (\d+)\)", query):
            node["labels"] = {"nodes": [{"name": name} for name in pull.get("labels", [])][: int(match.group(1))]}
        if match := re.search(r"files\(first: (\d+)\)", query):
            kinds = {"added": "ADDED", "removed": "DELETED", "renamed": "RENAMED", "copied": "COPIED"}
            node["files"] = {
                "nodes": [
                    {"path": f.filename, "changeType": kinds.get(f.status, "MODIFIED")}
                    for f in sorted(pull.get("files", []), key=lambda f: f.filename)[: int(match.group(1))]
                ]
            }
        if "closingIssuesReferences(" in query:
            node["closingIssuesReferences"] = {"nodes": [{"number": n, "title": t} for n, t in pull.get("closes", [])]}
        return node

    # --- GraphQL (the query shapes the bot sends: commits' associatedPullRequests, PRs by number) --
    _OBJECT = re.compile(r'(\w+): object\(oid: "([0-9a-fA-F]{4,40})"\)')
    _PULL = re.compile(r"(\w+): pullRequest\(number: (\d+)\)")
    _FIRST = re.compile(r"\b(\w+)\(first: (\d+)\)")

    def _graphql(self, raw: bytes) -> None:
        fake = self.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            recorded = str(json.loads(raw or b"{}").get("query") or "")
        except (ValueError, AttributeError):
            recorded = ""
        with fake._lock:
            fake.requests.append(RecordedRequest("POST", "/graphql", {}, headers, recorded))
        if not fake.graphql:  # e.g. GitHub Enterprise without the GraphQL API
            return self._send(404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {})
        if _token(headers.get("authorization", "")) is None:  # GraphQL always needs a token
            return self._send(
                401,
                {
                    "message": "This endpoint requires you to be authenticated.",
                    "documentation_url": "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
                    "status": "401",
                },
                {},
            )
        try:
            body = json.loads(raw or b"{}")
            query, variables = body["query"], body.get("variables") or {}
        except (ValueError, KeyError, TypeError):
            return self._send(400, {"message": "Problems parsing JSON", "status": "400"}, {})
        repo = fake._repos.get(f"{variables.get('owner')}/{variables.get('name')}".lower())
        token = _token(headers.get("authorization", "")) or ""
        if fake.app is not None and token not in fake._tokens:
            issued = fake.app.installation_token(token)
            if issued is None or issued.expires_at <= fake.app.now():
                return self._send(401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}, {})
            if not fake.app.covers(issued, f"{variables.get('owner')}/{variables.get('name')}"):
                repo = None  # GraphQL hides a repository the token cannot see
        if repo is None:
            return self._send(
                200,
                {
                    "data": {"repository": None},
                    "errors": [
                        {
                            "type": "NOT_FOUND",
                            "path": ["repository"],
                            "message": f"Could not resolve to a Repository with the name '{variables.get('owner')}/{variables.get('name')}'.",
                        }
                    ],
                },
                {},
            )
        for connection, first in self._FIRST.findall(query):
            if int(first) > 100:  # GitHub refuses the whole query
                return self._send(
                    200,
                    {
                        "errors": [
                            {
                                "type": "EXCESSIVE_PAGINATION",
                                "path": ["repository"],
                                "message": f"Requesting {first} records on the `{connection}` connection exceeds the "
                                "`first` limit of 100 records.",
                            }
                        ]
                    },
                    {},
                )
        out: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        for alias, number in self._PULL.findall(query):
            pull = repo.pulls.get(int(number))
            if pull is None:  # an issue's number, or none at all
                out[alias] = None
                errors.append(
                    {
                        "type": "NOT_FOUND",
                        "path": ["repository", alias],
                        "locations": [{"line": 1, "column": query.index(f"{alias}:") + 1}],
                        "message": f"Could not resolve to a PullRequest with the number of {number}.",
                    }
                )
                continue
            node = self._pull_node(query, int(number), pull)
            if not re.search(r"[{\s]number[\s}]", query):
                node.pop("number")  # GraphQL sends only the fields the query selects
            if not re.search(r"[{\s]body[\s}]", query):
                node.pop("body")
            out[alias] = node
        for alias, oid in self._OBJECT.findall(query):
            sha = self._resolve(repo, oid)
            if sha is None:
                out[alias] = None
                continue
            message = repo.commits[sha].message
            nodes = [
                self._pull_node(query, n, p)
                for n, p in sorted(repo.pulls.items())
                if p.get("merge_commit_sha") == sha or f"(#{n})" in message
            ]
            out[alias] = {"associatedPullRequests": {"nodes": nodes}}
        answer: dict[str, Any] = {"data": {"repository": out}}
        if errors:
            answer["errors"] = errors
        self._send(200, answer, {})

    # --- endpoints -----------------------------------------------------------------------------
    def _list_commits(self, repo: FakeRepo, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        ref = query.get("sha") or repo.default_branch
        head = self._resolve(repo, ref)
        if head is None:
            return (
                404,
                {
                    "message": f"No commit found for SHA: {ref}",
                    "documentation_url": "https://docs.github.com/rest/commits/commits#list-commits",
                    "status": "404",
                },
                {},
            )
        commits = self._ancestors(repo, head)
        if "since" in query:
            since = _parse_iso(query["since"])
            commits = [c for c in commits if c.committed_at >= since]
        if "until" in query:
            until = _parse_iso(query["until"])
            commits = [c for c in commits if c.committed_at <= until]
        commits.sort(key=lambda c: (c.committed_at, c.order), reverse=True)
        page, links = self._paginate(commits, path, query, COMMITS_PER_PAGE, COMMITS_MAX_PER_PAGE)
        return 200, [self._commit_json(repo, c) for c in page], links

    def _get_commit(
        self, repo: FakeRepo, ref: str, path: str, query: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        sha = self._resolve(repo, ref)
        if sha is None:
            return (
                422,
                {
                    "message": f"No commit found for SHA: {ref}",
                    "documentation_url": "https://docs.github.com/rest/commits/commits#get-a-commit",
                    "status": "422",
                },
                {},
            )
        c = repo.commits[sha]
        files = c.files[:FILES_MAX]
        page, links = self._paginate(files, path, query, FILES_PER_PAGE, FILES_PER_PAGE)
        data = self._commit_json(repo, c)
        adds, dels = sum(f.additions for f in files), sum(f.deletions for f in files)
        data["stats"] = {"total": adds + dels, "additions": adds, "deletions": dels}
        data["files"] = [f.to_json(self.fake.url, self.fake.html_base, repo.full_name, c.sha) for f in page]
        return 200, data, links

    def _list_tags(self, repo: FakeRepo, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """GET /repos/{o}/{r}/tags: name, commit {sha, url}, zipball/tarball URLs; newest name first."""
        api, full = self.fake.url, repo.full_name
        names = sorted(repo.tags, reverse=True)
        page, links = self._paginate(names, path, query, COMMITS_PER_PAGE, COMMITS_MAX_PER_PAGE)
        return (
            200,
            [
                {
                    "name": n,
                    "zipball_url": f"{api}/repos/{full}/zipball/refs/tags/{n}",
                    "tarball_url": f"{api}/repos/{full}/tarball/refs/tags/{n}",
                    "commit": {"sha": repo.tags[n], "url": f"{api}/repos/{full}/commits/{repo.tags[n]}"},
                    "node_id": f"REF_{n}",
                }
                for n in page
            ],
            links,
        )

    def _list_branches(self, repo: FakeRepo, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """GET /repos/{o}/{r}/branches: name, commit {sha, url}, protected; by name, paginated
        (30 a page by default, 100 at most)."""
        api, full = self.fake.url, repo.full_name
        names = sorted(repo.branches)
        page, links = self._paginate(names, path, query, 30, 100)
        return (
            200,
            [
                {
                    "name": n,
                    "commit": {"sha": repo.branches[n], "url": f"{api}/repos/{full}/commits/{repo.branches[n]}"},
                    "protected": n == repo.default_branch,
                }
                for n in page
            ],
            links,
        )

    def _compare(
        self, repo: FakeRepo, basehead: str, path: str, query: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        """GET /repos/{o}/{r}/compare/{base}...{head}: status (ahead, behind, identical, diverged),
        ahead_by, behind_by, total_commits, and the commits reachable from head and not from base,
        oldest first, paginated (`page`, `per_page`, 250 by default). 404 for a ref that names nothing,
        and for two commits without common history ("No common ancestor between …")."""
        base_ref, sep, head_ref = basehead.partition("...")
        base = self._resolve(repo, base_ref) if sep else None
        head = self._resolve(repo, head_ref) if sep else None
        if base is None or head is None:
            return _not_found("https://docs.github.com/rest/commits/commits#compare-two-commits")
        from_head = {c.sha: c for c in self._ancestors(repo, head)}
        from_base = {c.sha: c for c in self._ancestors(repo, base)}
        ahead = [c for s, c in from_head.items() if s not in from_base]
        behind = [c for s, c in from_base.items() if s not in from_head]
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        ahead.sort(key=lambda c: (c.committed_at, c.order))  # oldest first, as GitHub lists them
        common = [c for s, c in from_head.items() if s in from_base]
        if not common:  # GitHub answers unrelated histories with a 404 of its own
            doc = "https://docs.github.com/rest/commits/commits#compare-two-commits"
            message = f"No common ancestor between {base_ref} and {head_ref}."
            return 404, {"message": message, "documentation_url": doc, "status": "404"}, {}
        merge_base = max(common, key=lambda c: (c.committed_at, c.order))
        page, links = self._paginate(ahead, path, query, 250, 1000)
        api, html, full = self.fake.url, self.fake.html_base, repo.full_name
        return (
            200,
            {
                "url": f"{api}/repos/{full}/compare/{basehead}",
                "html_url": f"{html}/{full}/compare/{basehead}",
                "permalink_url": f"{html}/{full}/compare/{base}...{head}",
                "diff_url": f"{html}/{full}/compare/{basehead}.diff",
                "patch_url": f"{html}/{full}/compare/{basehead}.patch",
                "base_commit": self._commit_json(repo, repo.commits[base]),
                "merge_base_commit": self._commit_json(repo, merge_base),
                "status": status,
                "ahead_by": len(ahead),
                "behind_by": len(behind),
                "total_commits": len(ahead),
                "commits": [self._commit_json(repo, c) for c in page],
                "files": [],
            },
            links,
        )

    # --- helpers -------------------------------------------------------------------------------
    def _resolve(self, repo: FakeRepo, ref: str) -> str | None:
        """A branch name, a tag, a full SHA, or an unambiguous SHA prefix (≥ 4 hex digits)."""
        if ref in repo.branches:
            return repo.branches[ref]
        if ref in repo.tags:
            return repo.tags[ref]
        if ref in repo.commits:
            return ref
        if len(ref) >= 4 and all(ch in "0123456789abcdef" for ch in ref.lower()):
            matches = [s for s in repo.commits if s.startswith(ref.lower())]
            if len(matches) == 1:
                return matches[0]
        return None

    def _ancestors(self, repo: FakeRepo, head: str) -> list[FakeCommit]:
        seen, todo, out = set(), [head], []
        while todo:
            sha = todo.pop()
            if sha in seen or sha not in repo.commits:
                continue
            seen.add(sha)
            out.append(repo.commits[sha])
            todo.extend(repo.commits[sha].parents)
        return out

    def _paginate(
        self, items: list, path: str, query: dict[str, str], default: int, maximum: int
    ) -> tuple[list, dict[str, str]]:
        per_page = max(1, min(int(query.get("per_page") or default), maximum))
        page = max(1, int(query.get("page") or 1))
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(n: int) -> str:
            return f"{self.fake.url}{path}?{urlencode({**query, 'per_page': per_page, 'page': n})}"

        rels = []
        if page > 1:
            rels.append(f'<{link(page - 1)}>; rel="prev"')
        if page < last:
            rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
        if page > 1:
            rels.append(f'<{link(1)}>; rel="first"')
        return chunk, ({"Link": ", ".join(rels)} if rels else {})

    def _repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        api, html = self.fake.url, self.fake.html_base
        owner, name = repo.full_name.split("/")
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": name,
            "full_name": repo.full_name,
            "private": repo.private,
            "fork": False,
            "description": None,
            "owner": {
                "login": owner,
                "id": repo.id,
                "type": "Organization",
                "url": f"{api}/users/{owner}",
                "html_url": f"{html}/{owner}",
            },
            "html_url": f"{html}/{repo.full_name}",
            "url": f"{api}/repos/{repo.full_name}",
            "commits_url": f"{api}/repos/{repo.full_name}/commits{{/sha}}",
            "pulls_url": f"{api}/repos/{repo.full_name}/pulls{{/number}}",
            "default_branch": repo.default_branch,
            "visibility": "private" if repo.private else "public",
            "created_at": "2020-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "pushed_at": "2026-01-01T00:00:00Z",
        }

    def _user_json(self, login: str | None) -> dict[str, Any] | None:
        if not login:
            return None  # GitHub sends null when the e-mail belongs to no account
        api, html = self.fake.url, self.fake.html_base
        return {
            "login": login,
            "id": abs(hash(login)) % 10**8,
            "type": "User",
            "url": f"{api}/users/{login}",
            "html_url": f"{html}/{login}",
        }

    def _commit_json(self, repo: FakeRepo, c: FakeCommit) -> dict[str, Any]:
        api, html, full = self.fake.url, self.fake.html_base, repo.full_name
        tree = hashlib.sha1(f"tree:{c.sha}".encode()).hexdigest()
        return {
            "sha": c.sha,
            "node_id": f"C_{c.sha[:12]}",
            "commit": {
                "author": {"name": c.author, "email": c.email, "date": _iso(c.authored_at)},
                "committer": {"name": c.committer, "email": c.committer_email, "date": _iso(c.committed_at)},
                "message": c.message,
                "tree": {"sha": tree, "url": f"{api}/repos/{full}/git/trees/{tree}"},
                "url": f"{api}/repos/{full}/git/commits/{c.sha}",
                "comment_count": 0,
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
            },
            "url": f"{api}/repos/{full}/commits/{c.sha}",
            "html_url": f"{html}/{full}/commit/{c.sha}",
            "comments_url": f"{api}/repos/{full}/commits/{c.sha}/comments",
            "author": self._user_json(c.login),
            "committer": self._user_json(c.login),
            "parents": [
                {"sha": p, "url": f"{api}/repos/{full}/commits/{p}", "html_url": f"{html}/{full}/commit/{p}"}
                for p in c.parents
            ],
        }

    def _pull_json(self, repo: FakeRepo, number: int, pull: dict[str, Any]) -> dict[str, Any]:
        api, html, full = self.fake.url, self.fake.html_base, repo.full_name
        return {
            "url": f"{api}/repos/{full}/pulls/{number}",
            "id": 1000 + number,
            "number": number,
            "state": pull["state"],
            "title": pull["title"],
            "body": pull["body"],
            "html_url": f"{html}/{full}/pull/{number}",
            "user": self._user_json(pull["user"]),
            "merged": pull["merged"],
            "created_at": "2026-01-01T00:00:00Z",
            "merged_at": "2026-01-02T00:00:00Z" if pull["merged"] else None,
            "merge_commit_sha": pull.get("merge_commit_sha"),
            "labels": [self._label_json(repo, name) for name in pull.get("labels", [])],
            "head": {"label": f"{full.split('/')[0]}:feature", "ref": "feature", "sha": "0" * 40},
            "base": {
                "label": f"{full.split('/')[0]}:{repo.default_branch}",
                "ref": repo.default_branch,
                "sha": "1" * 40,
            },
        }

    def _label_json(self, repo: FakeRepo, name: str) -> dict[str, Any]:
        ident = int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)
        return {
            "id": ident,
            "node_id": f"LA_{ident}",
            "url": f"{self.fake.url}/repos/{repo.full_name}/labels/{name}",
            "name": name,
            "color": "ededed",
            "default": False,
            "description": None,
        }

    def _send(self, status: int, body: Any, extra: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
        extra = extra or {}
        if "X-RateLimit-Remaining" not in extra:
            for key, value in {
                "X-RateLimit-Limit": "5000",
                "X-RateLimit-Remaining": "4999",
                "X-RateLimit-Used": "1",
                "X-RateLimit-Resource": "core",
                "X-RateLimit-Reset": str(int(time.time()) + 3600),
            }.items():
                self.send_header(key, value)
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


def _not_found(doc: str = DOCS) -> tuple[int, Any, dict[str, str]]:
    return 404, {"message": "Not Found", "documentation_url": doc, "status": "404"}, {}


def _token(authorization: str) -> str | None:
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() in ("token", "bearer") and value.strip() else None


@pytest.fixture
def fake_github():
    """A started FakeGitHub at the API root (no prefix)."""
    with FakeGitHub() as gh:
        yield gh
