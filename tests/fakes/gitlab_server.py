"""A fake GitLab REST API (v4) on 127.0.0.1, reached by the real python-gitlab through GITLAB_URL.

It answers with the JSON shapes GitLab sends (docs.gitlab.com/api: commits, commit diffs, merge
requests, closes_issues, repository files/tree/tags/compare/merge_base, releases), paginates as
GitLab does (`per_page` ≤ 100, `page`; `X-Page`, `X-Per-Page`, `X-Next-Page`, `X-Prev-Page`,
`X-Total`, `X-Total-Pages` and a `Link` header with absolute URLs), filters `since`/`until`
inclusively on the committed date, and refuses what GitLab refuses: a token it does not know →
401 `{"message": "401 Unauthorized"}`, an unknown project → 404 `{"message": "404 Project Not
Found"}`, and, when told, 429 with `Retry-After` and `RateLimit-*` headers.

    with FakeGitLab() as gl:
        gl.add_project("acme/platform/api")              # default branch "main"
        sha = gl.add_commit("acme/platform/api", "Add the knob", committed_at=…, diffs=[FakeDiff("knob.py")])
        gl.add_merge_request("acme/platform/api", 7, title="Add the knob", description="Closes #3",
                             merge_commit_sha=sha, labels=["security"], closes=[(3, "Crash")])
        settings = make_settings(gitlab_url=gl.url)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import pytest

PER_PAGE, MAX_PER_PAGE = 20, 100  # GitLab's defaults


@dataclass
class FakeDiff:
    """One file of a commit's diff; `too_large` as GitLab marks a cut diff (its `diff` is empty)."""

    path: str
    status: str = "modified"  # added | removed | modified | renamed
    lines: int = 1
    old_path: str | None = None
    too_large: bool = False
    diff: str | None = None

    def to_json(self) -> dict[str, Any]:
        text = self.diff
        if text is None:
            text = (
                ""
                if self.too_large
                else f"@@ -1,0 +1,{self.lines} @@\n" + "".join(f"+line {i}\n" for i in range(self.lines))
            )
        return {
            "diff": text,
            "new_path": self.path,
            "old_path": self.old_path or self.path,
            "a_mode": "0" if self.status == "added" else "100644",
            "b_mode": "0" if self.status == "removed" else "100644",
            "new_file": self.status == "added",
            "renamed_file": self.status == "renamed",
            "deleted_file": self.status == "removed",
            "generated_file": False,
            "too_large": self.too_large,
            "collapsed": False,
        }


@dataclass
class FakeCommit:
    sha: str
    message: str
    author: str
    email: str
    committed_at: datetime
    parents: tuple[str, ...]
    diffs: list[FakeDiff]
    files: dict[str, str | None] = field(default_factory=dict)  # the tree it carries


@dataclass
class FakeProject:
    id: int
    path: str
    default_branch: str = "main"
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    commits: dict[str, FakeCommit] = field(default_factory=dict)
    merge_requests: dict[int, dict[str, Any]] = field(default_factory=dict)
    releases: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


class FakeGitLab:
    def __init__(self) -> None:
        self._projects: dict[str, FakeProject] = {}
        self._ids = itertools.count(101)
        self._lock = threading.Lock()
        self._tokens: set[str] = set()
        self._faults: list[tuple[int, dict[str, str], dict]] = []
        self.requests: list[Recorded] = []
        self.latency = 0.0
        self._server: ThreadingHTTPServer | None = None
        self._clock = itertools.count()

    # --- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> FakeGitLab:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeGitLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- content -----------------------------------------------------------------------------------
    def add_project(self, path: str, default_branch: str = "main") -> FakeProject:
        project = FakeProject(next(self._ids), path, default_branch)
        self._projects[path.lower()] = project
        return project

    def add_commit(
        self,
        path: str,
        message: str,
        *,
        committed_at: datetime,
        diffs: list[FakeDiff] | None = None,
        branch: str | None = None,
        parents: tuple[str, ...] | None = None,
        author: str = "Ada Lovelace",
        email: str = "ada@example.com",
        contents: dict[str, str | None] | None = None,
    ) -> str:
        project = self._projects[path.lower()]
        branch = branch or project.default_branch
        if parents is None:
            tip = project.branches.get(branch)
            parents = (tip,) if tip else ()
        files = dict(project.commits[parents[0]].files) if parents else {}
        for name, text in (contents or {}).items():
            if text is None:
                files.pop(name, None)
            else:
                files[name] = text
        sha = hashlib.sha1(f"{path}{message}{committed_at}{parents}{next(self._clock)}".encode()).hexdigest()
        project.commits[sha] = FakeCommit(
            sha, message, author, email, committed_at, parents, diffs or [FakeDiff("README.md")], files
        )
        project.branches[branch] = sha
        return sha

    def add_branch(self, path: str, name: str, at: str) -> None:
        """A branch at commit `at` (served by /repository/branches; commits and refs resolve it)."""
        self._projects[path.lower()].branches[name] = at

    def add_tag(self, path: str, name: str, at: str) -> None:
        self._projects[path.lower()].tags[name] = at

    def add_merge_request(
        self,
        path: str,
        iid: int,
        *,
        title: str,
        description: str = "",
        labels: list[str] | None = None,
        merge_commit_sha: str | None = None,
        squash_commit_sha: str | None = None,
        sha: str | None = None,
        target_branch: str = "main",
        state: str = "merged",
        merged_at: datetime | None = None,
        closes: list[tuple[int, str]] | None = None,
    ) -> None:
        project = self._projects[path.lower()]
        merged = merged_at or datetime.now(UTC)
        project.merge_requests[iid] = {
            "id": 9000 + iid,
            "iid": iid,
            "project_id": project.id,
            "title": title,
            "description": description,
            "state": state,
            "created_at": _iso(merged),
            "updated_at": _iso(merged),
            "merged_at": _iso(merged) if state == "merged" else None,
            "target_branch": target_branch,
            "source_branch": f"feature-{iid}",
            "labels": list(labels or []),
            "sha": sha or merge_commit_sha,
            "merge_commit_sha": merge_commit_sha,
            "squash_commit_sha": squash_commit_sha,
            "web_url": f"{self.url}/{project.path}/-/merge_requests/{iid}",
            "references": {"short": f"!{iid}", "full": f"{project.path}!{iid}"},
            "_closes": list(closes or []),
        }

    def add_release(self, path: str, tag: str, description: str, released_at: datetime) -> None:
        self._projects[path.lower()].releases.append(
            {
                "tag_name": tag,
                "name": tag,
                "description": description,
                "created_at": _iso(released_at),
                "released_at": _iso(released_at),
                "upcoming_release": False,
            }
        )

    # --- behaviour ---------------------------------------------------------------------------------
    def accept_tokens(self, *tokens: str) -> None:
        self._tokens = set(tokens)

    def rate_limit_next(self, retry_after: int = 1, n: int = 1) -> None:
        """The next n requests: 429 as GitLab's rate limiter answers (Retry-After, RateLimit-*)."""
        reset = str(math.ceil(time.time() + retry_after))
        headers = {
            "Retry-After": str(retry_after),
            "RateLimit-Limit": "600",
            "RateLimit-Observed": "601",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": reset,
            "RateLimit-ResetTime": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(int(reset))),
        }
        self._faults += [(429, headers, {"message": "Retry later"})] * n

    def count(self, path: str | None = None, *, startswith: str | None = None) -> int:
        return sum(
            1
            for r in self.requests
            if (path is None or r.path == path) and (startswith is None or r.path.startswith(startswith))
        )

    # --- graph -------------------------------------------------------------------------------------
    def _resolve(self, project: FakeProject, ref: str) -> str | None:
        if ref in project.branches:
            return project.branches[ref]
        if ref in project.tags:
            return project.tags[ref]
        found = [s for s in project.commits if s.startswith(ref)] if len(ref) >= 7 else []
        return found[0] if len(found) == 1 else None

    def _reachable(self, project: FakeProject, head: str) -> set[str]:
        seen, todo = set(), [head]
        while todo:
            sha = todo.pop()
            if sha in seen or sha not in project.commits:
                continue
            seen.add(sha)
            todo += list(project.commits[sha].parents)
        return seen


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    fake: FakeGitLab

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = dict(parse_qsl(split.query))
        lists = {
            k: [v for kk, v in parse_qsl(split.query) if kk == k] for k, _ in parse_qsl(split.query) if k.endswith("[]")
        }
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.fake
        with fake._lock:
            fake.requests.append(Recorded("GET", split.path, query, headers))
            fault = fake._faults.pop(0) if fake._faults else None
        if fake.latency:
            time.sleep(fake.latency)
        if fault is not None:
            return self._send(fault[0], fault[2], fault[1])
        token = headers.get("private-token")
        if token is not None and fake._tokens and token not in fake._tokens:
            return self._send(401, {"message": "401 Unauthorized"})
        raw_parts = split.path.split("/")  # the project's path arrives URL-encoded: one part
        if raw_parts[:4] != ["", "api", "v4", "projects"] or len(raw_parts) < 5:
            return self._send(404, {"error": "404 Not Found"})
        key = unquote(raw_parts[4])
        project = next((p for p in fake._projects.values() if p.path.lower() == key.lower() or str(p.id) == key), None)
        if project is None:
            return self._send(404, {"message": "404 Project Not Found"})
        rest = [unquote(p) for p in raw_parts[5:]]
        status, body = self._answer(project, rest, query, lists)
        if isinstance(body, _Page):
            return self._paginate(body.items, query)
        if isinstance(body, bytes):
            return self._send(status, body, {"Content-Type": "text/plain; charset=utf-8"})
        return self._send(status, body)

    def _answer(
        self, p: FakeProject, rest: list[str], q: dict[str, str], lists: dict[str, list[str]]
    ) -> tuple[int, Any]:
        fake = self.fake
        if not rest:
            return 200, {
                "id": p.id,
                "path_with_namespace": p.path,
                "name": p.path.rsplit("/", 1)[-1],
                "default_branch": p.default_branch,
                "web_url": f"{fake.url}/{p.path}",
                "http_url_to_repo": f"{fake.url}/{p.path}.git",
            }
        if rest[:2] == ["repository", "commits"] and len(rest) == 2:
            head = fake._resolve(p, q.get("ref_name") or p.default_branch)
            if head is None:
                return 404, {"message": "404 Reference Not Found"}
            listed = [p.commits[s] for s in fake._reachable(p, head)]
            if "since" in q:
                listed = [c for c in listed if c.committed_at >= _parse(q["since"])]
            if "until" in q:
                listed = [c for c in listed if c.committed_at <= _parse(q["until"])]
            listed.sort(key=lambda c: c.committed_at, reverse=True)
            return 200, _Page([self._commit_json(p, c) for c in listed])
        if rest[:2] == ["repository", "commits"] and len(rest) >= 3:
            sha = fake._resolve(p, rest[2])
            if sha is None:
                return 404, {"message": "404 Commit Not Found"}
            c = p.commits[sha]
            if len(rest) == 4 and rest[3] == "diff":
                return 200, _Page([d.to_json() for d in c.diffs])
            if len(rest) == 3:
                body = self._commit_json(p, c)
                lines = sum(d.lines for d in c.diffs)
                body["stats"] = {"additions": lines, "deletions": 0, "total": lines}
                return 200, body
        if rest == ["merge_requests"]:
            mrs = list(p.merge_requests.values())
            if q.get("state") and q["state"] != "all":
                mrs = [m for m in mrs if m["state"] == q["state"]]
            if q.get("target_branch"):
                mrs = [m for m in mrs if m["target_branch"] == q["target_branch"]]
            if q.get("updated_after"):
                mrs = [m for m in mrs if _parse(m["updated_at"]) >= _parse(q["updated_after"])]
            if lists.get("iids[]"):
                mrs = [m for m in mrs if str(m["iid"]) in lists["iids[]"]]
            return 200, _Page([self._mr_json(m) for m in sorted(mrs, key=lambda m: m["iid"], reverse=True)])
        if len(rest) >= 2 and rest[0] == "merge_requests" and rest[1].isdigit():
            mr = p.merge_requests.get(int(rest[1]))
            if mr is None:
                return 404, {"message": "404 Not found"}
            if len(rest) == 3 and rest[2] == "closes_issues":
                return 200, _Page(
                    [{"iid": n, "title": t, "state": "closed", "project_id": p.id} for n, t in mr["_closes"]]
                )
            return 200, self._mr_json(mr)
        if rest[:2] == ["repository", "files"] and len(rest) == 4 and rest[3] == "raw":
            sha = fake._resolve(p, q.get("ref") or p.default_branch)
            text = p.commits[sha].files.get(rest[2]) if sha else None
            if text is None:
                return 404, {"message": "404 File Not Found"}
            return 200, text.encode()
        if rest == ["repository", "tree"]:
            sha = fake._resolve(p, q.get("ref") or p.default_branch)
            if sha is None:
                return 404, {"message": "404 Tree Not Found"}
            base = (q.get("path") or "").strip("/")
            deep = q.get("recursive") == "true"
            entries: dict[str, str] = {}
            for name in p.commits[sha].files:
                if base and not name.startswith(base + "/"):
                    continue
                below = name[len(base) + 1 :] if base else name
                parts = below.split("/")
                if deep:
                    for i in range(1, len(parts)):
                        entries.setdefault("/".join(([base] if base else []) + parts[:i]), "tree")
                    entries[name] = "blob"
                else:
                    entries.setdefault(
                        "/".join(([base] if base else []) + parts[:1]), "blob" if len(parts) == 1 else "tree"
                    )
            return 200, _Page(
                [
                    {
                        "id": hashlib.sha1(n.encode()).hexdigest(),
                        "name": n.rsplit("/", 1)[-1],
                        "type": t,
                        "path": n,
                        "mode": "100644",
                    }
                    for n, t in sorted(entries.items())
                ]
            )
        if rest == ["repository", "branches"]:
            return 200, _Page(
                [
                    {
                        "name": n,
                        "commit": self._commit_json(p, p.commits[s]),
                        "merged": False,
                        "protected": n == p.default_branch,
                        "default": n == p.default_branch,
                        "web_url": f"{fake.url}/{p.path}/-/tree/{n}",
                    }
                    for n, s in sorted(p.branches.items())
                ]
            )
        if rest == ["repository", "tags"]:
            return 200, _Page([{"name": n, "commit": {"id": s}, "target": s} for n, s in p.tags.items()])
        if rest == ["repository", "compare"]:
            base, head = fake._resolve(p, q.get("from", "")), fake._resolve(p, q.get("to", ""))
            if base is None or head is None:
                return 404, {"message": "404 Ref Not Found"}
            mine = fake._reachable(p, head) - fake._reachable(p, base)
            commits = sorted((p.commits[s] for s in mine), key=lambda c: c.committed_at)
            return 200, {
                "commit": self._commit_json(p, p.commits[head]),
                "commits": [self._commit_json(p, c) for c in commits],
                "diffs": [],
                "compare_timeout": False,
                "compare_same_ref": base == head,
                "web_url": f"{fake.url}/{p.path}/-/compare/{q['from']}...{q['to']}",
            }
        if rest == ["repository", "merge_base"]:
            refs = [fake._resolve(p, r) for r in lists.get("refs[]", [])]
            if len(refs) < 2 or None in refs:
                return 404, {"message": "404 Commit Not Found"}
            common = fake._reachable(p, refs[0]) & fake._reachable(p, refs[1])  # type: ignore[arg-type]
            if not common:
                return 400, {"message": "Could not find merge base"}
            newest = max(common, key=lambda s: p.commits[s].committed_at)
            return 200, self._commit_json(p, p.commits[newest])
        if rest == ["releases"]:
            return 200, _Page(sorted(p.releases, key=lambda r: r["released_at"], reverse=True))
        return 404, {"error": "404 Not Found"}

    def _commit_json(self, p: FakeProject, c: FakeCommit) -> dict[str, Any]:
        title = c.message.split("\n", 1)[0]
        return {
            "id": c.sha,
            "short_id": c.sha[:8],
            "title": title,
            "message": c.message,
            "author_name": c.author,
            "author_email": c.email,
            "authored_date": _iso(c.committed_at),
            "committer_name": c.author,
            "committer_email": c.email,
            "committed_date": _iso(c.committed_at),
            "created_at": _iso(c.committed_at),
            "parent_ids": list(c.parents),
            "web_url": f"{self.fake.url}/{p.path}/-/commit/{c.sha}",
        }

    @staticmethod
    def _mr_json(mr: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in mr.items() if not k.startswith("_")}

    def _paginate(self, items: list[Any], query: dict[str, str]) -> None:
        per_page = max(1, min(MAX_PER_PAGE, int(query.get("per_page") or PER_PAGE)))
        page = max(1, int(query.get("page") or 1))
        pages = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        base = f"{self.fake.url}{urlsplit(self.path).path}"

        def link(n: int) -> str:
            params = [(k, v) for k, v in parse_qsl(urlsplit(self.path).query) if k not in ("page", "per_page")]
            return f"{base}?{urlencode(params + [('page', str(n)), ('per_page', str(per_page))], quote_via=quote)}"

        links = []
        if page < pages:
            links.append(f'<{link(page + 1)}>; rel="next"')
        if page > 1:
            links.append(f'<{link(page - 1)}>; rel="prev"')
        links += [f'<{link(1)}>; rel="first"', f'<{link(pages)}>; rel="last"']
        headers = {
            "X-Page": str(page),
            "X-Per-Page": str(per_page),
            "X-Next-Page": str(page + 1) if page < pages else "",
            "X-Prev-Page": str(page - 1) if page > 1 else "",
            "X-Total": str(len(items)),
            "X-Total-Pages": str(pages),
            "Link": ", ".join(links),
        }
        self._send(200, chunk, headers)

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        extra = dict(headers or {})
        self.send_header("Content-Type", extra.pop("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


@dataclass
class _Page:
    items: list[Any]


@pytest.fixture
def fake_gitlab():
    with FakeGitLab() as gl:
        yield gl
