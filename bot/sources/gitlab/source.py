"""`GitLabSource`: the `CommitSource` of a GitLab project (gitlab.com or self-managed, GITLAB_URL)
— a day's commits with their merge requests, a commit's diff, a file's text, tags and compare for
release ranges, and what the learned profile (bot/taste) reads: the tip before a week, changelog
paths, history, releases, MR labels.

A day costs: the project (once per source), one page of commits per 100, the merged merge
requests of the window (one page per 100: each commit's MR — its merge, squash or head commit —
and that MR's title, description and labels come with it), one diff request per commit, and one
`closes_issues` request per MR whose description closes an issue.

Semantics are the GitHub source's: a window lists every commit reachable from the branch whose
committer date lies in it (GitHub's commits listing is not first-parent either), merges left out
unless asked for; a range `A..B` is the first-parent line from B back to A.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from settings import Settings

from ...core.models import Commit, FileChange, NotFoundError, PastCommit, UsageError, Window
from ...i18n import phrase
from ..message import pr_context, release_text
from ..refrange import release_pair
from .client import Api, GitLabClient, GitlabHttpError
from .convert import CLOSING, labels_of, landed_as, merge_request_named, to_commit, to_file, when

log = logging.getLogger(__name__)

COMMITS_MAX = 5000  # a window's commits at most (50 pages)
MERGE_REQUESTS_MAX = 1000  # merged MRs read for a window (10 pages)
RANGE_MAX = 10_000
TAGS_MAX = 1000
BRANCHES_MAX = 1000  # branches listed to match a subscription's patterns (ten pages)
RELEASES_MAX = 300
MR_CACHE = 5000
LABEL_BATCH = 100  # MRs per `iids[]` request for their labels
NOTES_DIRS = {"docs": True, "doc": True, "changelogs": False}  # folder -> recursive, as GitHub's


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ref(ref: str) -> str:
    ref = (ref or "").strip()
    if not ref or ref.startswith("-"):
        raise UsageError(phrase("errors.no_sha"))
    return ref


class GitLabSource(GitLabClient):
    """`CommitSource` for `gitlab:group/subgroup/project`."""

    def __init__(self, project: str, settings: Settings):
        super().__init__(project, settings)
        self._mr_text: dict[int, str] = {}  # iid → the MR's context and description, as the prompt reads it
        self._mr_labels: dict[int, list[str] | None] = {}  # iid → labels (None: no such MR)
        self._pending: dict[int, dict] = {}  # MRs seen in a listing whose text is not made yet

    # --- CommitSource ----------------------------------------------------------------------------
    async def default_branch(self) -> str:
        return str((await self._info()).get("default_branch") or "main")

    async def branches(self) -> list[str]:
        """The project's branches (GET /projects/:id/repository/branches, every page), by name."""
        await self._info()

        def fetch(api: Api) -> list[str]:
            return [str(b["name"]) for b in api.pages("/repository/branches", most=BRANCHES_MAX) if b.get("name")]

        return sorted(await self._call(fetch, not_found=phrase("errors.no_branch", branch="*", repo=self.name)))

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        if window.is_range:
            return await self._list_range(window.base, window.head)
        ref = branch or await self.default_branch()
        # GitLab's since/until are inclusive: stop one second before the window's end.
        since, until = _iso(window.start_utc), _iso(window.end_utc - timedelta(seconds=1))

        def fetch(api: Api) -> tuple[list[dict], list[dict]]:
            listed = api.pages("/repository/commits", most=COMMITS_MAX, ref_name=ref, since=since, until=until)
            merged = (
                api.pages(
                    "/merge_requests",
                    most=MERGE_REQUESTS_MAX,
                    state="merged",
                    target_branch=ref,
                    updated_after=since,
                    scope="all",
                )
                if listed
                else []
            )
            return listed, merged

        listed, merged = await self._call(fetch, not_found=phrase("errors.no_branch", branch=ref, repo=self.name))
        mr_of = self._remember_merged(merged)
        commits = [to_commit(self.name, c, mr_of.get(str(c.get("id")))) for c in listed]
        kept = [c for c in commits if window.contains(c.committed_at) and (include_merges or not c.is_merge)]
        return sorted(kept, key=lambda c: c.committed_at, reverse=True)

    def _remember_merged(self, merged: list[dict]) -> dict[str, int]:
        """sha → the iid of the MR that landed it; each MR's text kept for `pr_description`
        (without its closed issues yet: `prefetch_prs` adds them)."""
        mr_of: dict[str, int] = {}
        for mr in merged:
            iid = mr.get("iid")
            if not isinstance(iid, int):
                continue
            for sha in landed_as(mr):
                mr_of.setdefault(sha, iid)
            self._mr_labels[iid] = labels_of(mr)
            self._pending[iid] = mr
        return mr_of

    async def prefetch_prs(self, commits: list[Commit]) -> None:
        """The texts of these commits' MRs: those seen in the day's listing need only their closed
        issues (asked only when the description closes one), concurrently; others are asked one by
        one by `pr_description`."""
        wanted = [c.pr_number for c in commits if c.pr_number and c.pr_number not in self._mr_text]
        await asyncio.gather(*(self._make_text(n) for n in dict.fromkeys(wanted) if n in self._pending))

    async def _make_text(self, iid: int) -> None:
        mr = self._pending.pop(iid, None)
        if mr is None:
            return
        issues: list[tuple[int, str]] = []
        if CLOSING.search(str(mr.get("description") or "")):

            def fetch(api: Api) -> list[dict]:
                return api.pages(f"/merge_requests/{iid}/closes_issues", most=20)

            try:
                closed = await self._call(fetch, not_found=phrase("errors.no_pr", number=iid, repo=self.name))
                issues = [(int(i["iid"]), str(i.get("title") or "")) for i in closed if isinstance(i.get("iid"), int)]
            except NotFoundError:
                pass
        text = pr_context(labels_of(mr), issues) + str(mr.get("description") or "")
        self._mr_text[iid] = text
        while len(self._mr_text) > MR_CACHE:
            self._mr_text.pop(next(iter(self._mr_text)))

    async def pr_description(self, number: int) -> str | None:
        if number in self._mr_text:
            return self._mr_text[number]
        if number not in self._pending:
            mr = await self._merge_request(number)
            if mr is None:
                return None
            self._pending[number] = mr
        await self._make_text(number)
        return self._mr_text.get(number)

    async def _merge_request(self, iid: int) -> dict | None:
        def fetch(api: Api) -> dict | None:
            try:
                found = api.get(f"/merge_requests/{iid}")
            except GitlabHttpError as exc:
                if exc.response_code == 404:
                    return None
                raise
            return found if isinstance(found, dict) else None

        return await self._call(fetch, not_found=phrase("errors.no_pr", number=iid, repo=self.name))

    async def pr_commit(self, number: int) -> Commit | None:
        """The commit merge request !number landed as (its merge or squash commit, or its head
        when fast-forwarded), or None when it is not merged."""
        mr = await self._merge_request(number)
        if not mr or mr.get("state") != "merged":
            return None
        shas = landed_as(mr)
        return await self.get_commit(shas[0]) if shas else None

    async def get_files(self, sha: str) -> tuple[FileChange, ...]:
        sha = _ref(sha)

        def fetch(api: Api) -> tuple[FileChange, ...]:
            return tuple(to_file(d) for d in api.pages(f"/repository/commits/{quote(sha, safe='')}/diff"))

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=sha, repo=self.name))

    async def get_commit(self, ref: str) -> Commit:
        ref = _ref(ref)
        await self._info()

        def fetch(api: Api) -> dict:
            return api.get(f"/repository/commits/{quote(ref, safe='')}", stats="true")

        found = await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=self.name))
        return to_commit(self.name, found, detailed=True)

    async def resolve_ref(self, ref: str) -> Commit:
        await self._info()
        if not ref.strip() or ref.startswith("-"):
            raise NotFoundError(phrase("errors.no_ref", ref=ref, repo=self.name))
        try:
            return await self.get_commit(ref)
        except NotFoundError:
            raise NotFoundError(phrase("errors.no_ref", ref=ref, repo=self.name)) from None

    async def read_file(self, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref` (the default branch when None); None when it does not exist."""
        ref = ref or await self.default_branch()

        def fetch(api: Api) -> bytes:
            return api.raw(f"/repository/files/{quote(path, safe='')}/raw", ref=ref)

        try:
            data = await self._call(fetch, not_found=phrase("errors.no_file", path=path, repo=self.name))
        except NotFoundError:
            return None
        return data.decode("utf-8", "replace")

    # --- ranges of refs (bot/sources/refrange.py) -------------------------------------------------
    async def _compare(self, base: str, head: str) -> list[Commit]:
        """GET …/repository/compare: the commits reachable from head and not from base, oldest first."""
        await self._info()

        def fetch(api: Api) -> dict:
            return api.get("/repository/compare", **{"from": base, "to": head, "straight": "false"})

        found = await self._call(
            fetch, not_found=phrase("errors.no_ref", ref=f"{base[:12]}..{head[:12]}", repo=self.name)
        )
        return [to_commit(self.name, c) for c in (found.get("commits") or [])[:RANGE_MAX] if isinstance(c, dict)]

    async def _list_range(self, base: str, head: str) -> list[Commit]:
        """The first-parent commits of base..head, newest first (merges on that line kept)."""
        by_sha = {c.sha: c for c in await self._compare(base, head)}
        line, sha = [], head
        while sha in by_sha:
            line.append(by_sha[sha])
            sha = by_sha[sha].parents[0] if by_sha[sha].parents else ""
        return line

    async def _merge_base(self, base: str, head: str) -> str | None:
        def fetch(api: Api) -> str | None:
            try:
                found = api.get("/repository/merge_base", **{"refs[]": [base, head]})
            except GitlabHttpError as exc:
                if exc.response_code in (400, 404):  # no common ancestor
                    return None
                raise
            return str(found.get("id")) if isinstance(found, dict) and found.get("id") else None

        return await self._call(fetch, not_found=phrase("errors.no_ref", ref=base, repo=self.name))

    async def relation(self, base: str, head: str) -> str:
        if base == head:
            return "identical"
        common = await self._merge_base(base, head)
        if common is None:
            return "unrelated"
        if common == base:
            return "ahead"
        return "behind" if common == head else "diverged"

    async def pushed_since(self, base: str, head: str, include_merges: bool = False) -> list[Commit] | None:
        if base == head:
            return []
        try:
            if await self.relation(base, head) != "ahead":
                return None
            commits = await self._compare(base, head)
        except NotFoundError:  # `base` is gone (a force-push)
            return None
        kept = [c for c in commits if include_merges or not c.is_merge]
        return sorted(kept, key=lambda c: c.committed_at, reverse=True)

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]:
        await self._info()

        def fetch(api: Api) -> list[str]:
            return [str(t["name"]) for t in api.pages("/repository/tags", most=TAGS_MAX) if t.get("name")]

        names = await self._call(fetch, not_found=phrase("errors.no_tags", repo=self.name))
        return release_pair(names, tag, self.name)

    # --- history, for the learned profile (bot/taste) ---------------------------------------------
    async def tip_before(self, before: datetime, branch: str | None = None) -> str | None:
        ref = branch or await self.default_branch()
        until = _iso(before - timedelta(seconds=1))

        def fetch(api: Api) -> str | None:
            try:
                first = api.pages("/repository/commits", most=1, ref_name=ref, until=until, per_page=1)
            except GitlabHttpError as exc:
                if exc.response_code == 404:  # an empty repository has no branch yet
                    return None
                raise
            return str(first[0]["id"]) if first else None

        return await self._call(fetch, not_found=phrase("errors.no_branch", branch=ref, repo=self.name))

    async def list_paths(self, ref: str) -> list[str]:
        """The root's files, and those under docs/, doc/ (every level) and changelogs/: where
        changelogs live, never the whole tree of a huge project."""
        ref = _ref(ref)
        await self._info()

        def fetch(api: Api) -> list[str]:
            root = api.pages("/repository/tree", ref=ref)
            paths = [str(e["path"]) for e in root if e.get("type") == "blob"]
            for entry in root:
                recursive = NOTES_DIRS.get(str(entry.get("name", "")).lower())
                if entry.get("type") == "tree" and recursive is not None:
                    below = api.pages("/repository/tree", ref=ref, path=entry["path"], recursive=str(recursive).lower())
                    paths += [str(e["path"]) for e in below if e.get("type") == "blob"]
            return paths

        return await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=self.name))

    async def history(self, ref: str, limit: int) -> list[PastCommit]:
        """Up to `limit` commits reachable from `ref`, newest first, merges left out; a commit's
        MR is the one its message names (its files are not read: one request each)."""
        ref = _ref(ref)
        await self._info()

        def fetch(api: Api) -> list[dict]:
            return api.pages("/repository/commits", most=2 * limit, ref_name=ref) if limit > 0 else []

        listed = await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=self.name))
        found = []
        for c in listed:
            if len(c.get("parent_ids") or ()) > 1:
                continue
            commit = to_commit(self.name, c)
            found.append(PastCommit(commit.sha, commit.committed_at, commit.title, commit.pr_number, ()))
            if len(found) >= limit:
                break
        return found

    async def release_bodies(self, before: datetime) -> list[str]:
        """The descriptions of the GitLab releases released before `before`, newest first, each
        headed by its version as a changelog's section is (upcoming releases left out)."""
        await self._info()

        def fetch(api: Api) -> list[dict]:
            return api.pages("/releases", most=RELEASES_MAX)

        listed = await self._call(fetch, not_found=phrase("errors.no_repo_on_gitlab", repo=self.name, host=self.host))
        kept = []
        for r in listed:
            stamp = r.get("released_at") or r.get("created_at")
            if r.get("upcoming_release") or not stamp or not r.get("description"):
                continue
            released = when(stamp)
            if released < before:
                kept.append((released, release_text(str(r.get("tag_name") or ""), str(r["description"]))))
        return [t for _, t in sorted(kept, key=lambda k: k[0], reverse=True)]

    async def pr_labels(self, numbers: list[int]) -> dict[int, list[str]]:
        """The label names of these MRs, LABEL_BATCH a request (`iids[]`); unknown numbers left out."""
        wanted = list(dict.fromkeys(n for n in numbers if isinstance(n, int) and n > 0))[:2000]
        missing = [n for n in wanted if n not in self._mr_labels]
        for start in range(0, len(missing), LABEL_BATCH):
            batch = missing[start : start + LABEL_BATCH]

            def fetch(api: Api, batch: list[int] = batch) -> list[dict]:
                return api.pages("/merge_requests", most=len(batch), scope="all", state="all", **{"iids[]": batch})

            found = await self._call(
                fetch, not_found=phrase("errors.no_repo_on_gitlab", repo=self.name, host=self.host)
            )
            for n in batch:
                self._mr_labels.setdefault(n, None)
            for mr in found:
                if isinstance(mr.get("iid"), int):
                    self._mr_labels[mr["iid"]] = labels_of(mr)
        return {n: list(labels) for n in wanted if (labels := self._mr_labels.get(n)) is not None}


__all__ = ["GitLabSource", "merge_request_named"]
