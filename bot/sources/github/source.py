"""`GitHubSource`: the `CommitSource` of a GitHub (or GitHub Enterprise) repository — a day's
commits, a commit's files, a file's text, PR descriptions (a batch per GraphQL request), the
commit a PR landed as — and what the learned profile (bot/taste) reads of its past.

Everything asked of GitHub is here; the client it runs on (PyGithub, the pool, retries and rate
limits, errors in one sentence) is client.py, and turning the answers into our models convert.py.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from settings import Settings

from ...core.models import HISTORY_PATHS, BotError, Commit, FileChange, NotFoundError, PastCommit, Window
from ...i18n import phrase
from ..refrange import release_pair
from .client import PER_PAGE, Github, GitHubClient, GithubException, InstallationTokens
from .convert import PullFacts, graphql_pull_facts, pr_context, release_text, require_ref, to_commit, to_file
from .installations import app_for

log = logging.getLogger(__package__)  # the logger's name as before the split into a package

FILES_PER_PAGE = 300  # a commit's files: GitHub's maximum page (3000 files at most)
PR_BATCH = 50  # commits per GraphQL request for their PRs (well inside GitHub's node limits)
PR_CACHE = 5000  # PR bodies kept per repository source
# The learned profile's reading (bot/taste), in few requests: changelog files live at the root or
# under these folders (listed recursively only below docs/ and doc/), releases are read at most
# RELEASE_PAGES pages deep, PR labels come PR_LABEL_BATCH PRs per GraphQL request.
NOTES_DIRS = {"docs": True, "doc": True, "changelogs": False}  # folder -> recursive
RELEASE_PAGES = 3
PR_LABEL_BATCH = 100
PR_LABELS_MAX = 2000
LABELS_PER_PR = 20
COMPARE_PER_PAGE = 250  # a range's commits per compare page (GitHub's default; 10,000 at most in all)
RANGE_MAX = 10_000  # the most commits a range lists (GitHub's compare stops there too)
TAGS_MAX = 1000  # tags read for `release` (ten pages)
HISTORY_OVERREAD = 2  # history lists at most this many times `limit` commits (merges are skipped)


class GitHubSource(GitHubClient):
    """`CommitSource` for "owner/name" on GitHub or GitHub Enterprise (`settings.github_api_url`),
    read as the GitHub App when one is configured (`app`: its tokens; by default the process's,
    installations.py's `app_for`), else with GITHUB_TOKEN or none."""

    def __init__(self, repo: str, settings: Settings, app: InstallationTokens | None = None):
        super().__init__(repo, settings, app if app is not None else app_for(settings))
        self._pr_bodies: dict[int, str] = {}  # filled in batches by prefetch_prs
        self._pr_facts_seen: dict[int, PullFacts | None] = {}  # the learned profile's PRs (None: no PR)
        self._labels_unavailable_logged = False

    # --- CommitSource --------------------------------------------------------------------------
    async def default_branch(self) -> str:
        return (await self._repo_info()).default_branch

    async def branches(self) -> list[str]:
        """The repository's branches (GET /repos/{o}/{r}/branches, every page), by name."""
        info = await self._repo_info()

        def fetch(gh: Github) -> list[str]:
            return [b.name for b in gh.get_repo(info.full_name).get_branches()]

        return sorted(await self._call(fetch, not_found=phrase("errors.no_repo_on_github", repo=info.full_name)))

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        if window.is_range:
            return await self._list_range(window.base, window.head)
        info = await self._repo_info()
        ref = branch or info.default_branch
        # PyGithub formats since/until without converting to UTC: pass UTC. GitHub's bounds are
        # inclusive, so `until` stops one second before the window's (exclusive) end.
        since, until = window.start_utc, window.end_utc - timedelta(seconds=1)

        def fetch(gh: Github) -> list[Commit]:
            listed = gh.get_repo(info.full_name).get_commits(sha=ref, since=since, until=until)
            return [to_commit(info.full_name, c) for c in listed]

        commits = await self._call(fetch, not_found=phrase("errors.no_branch", branch=ref, repo=info.full_name))
        kept = [c for c in commits if window.contains(c.committed_at) and (include_merges or not c.is_merge)]
        return sorted(kept, key=lambda c: c.committed_at, reverse=True)

    # --- ranges of refs (bot/sources/refrange.py) ---------------------------------------------------
    async def _compare(self, base: str, head: str) -> tuple[str, list[Commit]]:
        """The compare API's status (ahead, behind, identical, diverged) and its commits: those
        reachable from head and not from base, RANGE_MAX at most, oldest first."""
        info = await self._repo_info()

        def fetch(gh: Github) -> tuple[str, list[Commit]]:
            compared = gh.get_repo(info.full_name).compare(base, head, comparison_commits_per_page=COMPARE_PER_PAGE)
            listed = []
            for c in compared.commits:
                listed.append(to_commit(info.full_name, c))
                if len(listed) >= RANGE_MAX:
                    break
            return compared.status, listed

        return await self._call(
            fetch, not_found=phrase("errors.no_ref", ref=f"{base[:12]}..{head[:12]}", repo=info.full_name)
        )

    async def _list_range(self, base: str, head: str) -> list[Commit]:
        """The first-parent commits of base..head, newest first: the compare API's commits, then
        the first-parent line from head through them. Merges on that line are kept (each stands
        for what it brought in)."""
        _status, commits = await self._compare(base, head)
        by_sha = {c.sha: c for c in commits}
        line, sha = [], head
        while sha in by_sha:
            line.append(by_sha[sha])
            sha = by_sha[sha].parents[0] if by_sha[sha].parents else ""
        return line

    async def pushed_since(self, base: str, head: str, include_merges: bool = False) -> list[Commit] | None:
        if base == head:
            return []
        try:
            status, commits = await self._compare(base, head)
        except NotFoundError:  # `base` is gone (a force-push, then garbage collection)
            return None
        if status not in ("ahead", "identical"):
            return None
        kept = [c for c in commits if include_merges or not c.is_merge]
        return sorted(kept, key=lambda c: c.committed_at, reverse=True)

    async def resolve_ref(self, ref: str) -> Commit:
        """A tag, branch or SHA as its commit (GET /commits/{ref} takes all three); NotFoundError naming it."""
        info = await self._repo_info()
        if not ref.strip() or ref.startswith("-"):
            raise NotFoundError(phrase("errors.no_ref", ref=ref, repo=info.full_name))

        def fetch(gh: Github) -> Commit:
            return to_commit(info.full_name, gh.get_repo(info.full_name).get_commit(ref))

        return await self._call(fetch, not_found=phrase("errors.no_ref", ref=ref, repo=info.full_name))

    async def relation(self, base: str, head: str) -> str:
        """The compare API's status; its 404 for two resolved ends is "No common ancestor"."""
        info = await self._repo_info()

        def fetch(gh: Github) -> str:
            return gh.get_repo(info.full_name).compare(base, head).status

        try:
            return await self._call(fetch, not_found=phrase("errors.no_ref", ref=base, repo=info.full_name))
        except NotFoundError:
            return "unrelated"

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]:
        """(the release before `tag` in version order or None, `tag`); `tag` None: the newest
        release (refrange.newest_release), as for a local repository."""
        info = await self._repo_info()

        def fetch(gh: Github) -> list[str]:
            names = []
            for t in gh.get_repo(info.full_name).get_tags():
                names.append(t.name)
                if len(names) >= TAGS_MAX:
                    break
            return names

        names = await self._call(fetch, not_found=phrase("errors.no_tags", repo=info.full_name))
        return release_pair(names, tag, info.full_name)

    async def get_files(self, sha: str) -> tuple[FileChange, ...]:
        sha = require_ref(sha)

        def fetch(gh: Github) -> tuple[FileChange, ...]:
            commit = gh.get_repo(self.name).get_commit(sha, commit_files_per_page=FILES_PER_PAGE)
            commit.complete()  # the one GET /commits/{sha}; further pages follow its Link header
            return tuple(to_file(f) for f in commit.files)

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
        ref = require_ref(ref)
        info = await self._repo_info()

        def fetch(gh: Github) -> Commit:
            commit = gh.get_repo(info.full_name).get_commit(ref, commit_files_per_page=FILES_PER_PAGE)
            commit.complete()
            return to_commit(info.full_name, commit, detailed=True)

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
        ref = require_ref(ref)
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
        listing gives them (100 a request), with the paths a clone's history gives: a commit's
        files would cost one request each, so those of a commit naming its pull request (a squash
        merge: the same files) are its PR's, read with the PRs' labels (PR_LABEL_BATCH a GraphQL
        request; `pr_labels` then asks nothing more). A commit naming no PR, or where GraphQL is
        unavailable, has none."""
        ref = require_ref(ref)
        info = await self._repo_info()
        most = HISTORY_OVERREAD * limit

        def fetch(gh: Github) -> list[PastCommit]:
            found: list[PastCommit] = []
            if limit <= 0:
                return found
            for listed, c in enumerate(gh.get_repo(info.full_name).get_commits(sha=ref), start=1):
                commit = to_commit(info.full_name, c)
                if not commit.is_merge:
                    found.append(PastCommit(commit.sha, commit.committed_at, commit.title, commit.pr_number, ()))
                # Stop before the listing asks for a page we will not read.
                if len(found) >= limit or listed >= most:
                    break
            return found

        found = await self._call(fetch, not_found=phrase("errors.no_commit", ref=ref, repo=info.full_name))
        facts = await self._pr_facts([c.pr_number for c in found if c.pr_number is not None])
        return [
            replace(c, paths=facts[c.pr_number].paths, added=facts[c.pr_number].added) if c.pr_number in facts else c
            for c in found
        ]

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
                    kept.append((published, release_text(release.tag_name or "", release.body)))
                if seen >= RELEASE_PAGES * PER_PAGE:
                    break
            return kept

        kept = await self._call(fetch, not_found=phrase("errors.no_repo_on_github", repo=info.full_name))
        return [text for _, text in sorted(kept, key=lambda k: k[0], reverse=True)]

    async def pr_labels(self, numbers: list[int]) -> dict[int, list[str]]:
        """The label names of these PRs (the first PR_LABELS_MAX); a number that is no PR (an
        issue's) is left out. Where GraphQL is unavailable (no token, an Enterprise server
        without it, a token it refuses) nothing, logged once."""
        facts = await self._pr_facts(numbers)
        return {n: list(facts[n].labels) for n in dict.fromkeys(numbers) if n in facts}

    async def _pr_facts(self, numbers: list[int]) -> dict[int, PullFacts]:
        """What the learned profile reads of these PRs (the first PR_LABELS_MAX): their labels and
        files, PR_LABEL_BATCH per GraphQL request, each PR asked once per source (kept, at most
        PR_CACHE). Unknown numbers (issues') are left out; without GraphQL, nothing."""
        wanted = list(dict.fromkeys(n for n in numbers if isinstance(n, int) and n > 0))[:PR_LABELS_MAX]
        missing = [n for n in wanted if n not in self._pr_facts_seen]
        if missing and not self._graphql_unavailable:
            if not self._authenticated:
                self._labels_unavailable("GitHub's GraphQL API needs a token")
            else:
                await self._read_pr_facts(missing)
        found = {n: self._pr_facts_seen.get(n) for n in wanted}
        return {n: facts for n, facts in found.items() if facts is not None}

    async def _read_pr_facts(self, missing: list[int]) -> None:
        info = await self._repo_info()
        owner, name = info.full_name.split("/", 1)
        for start in range(0, len(missing), PR_LABEL_BATCH):
            batch = missing[start : start + PR_LABEL_BATCH]
            fields = " ".join(
                f"pr{n}: pullRequest(number: {n}) {{ labels(first: {LABELS_PER_PR}) {{ nodes {{ name }} }} "
                f"files(first: {HISTORY_PATHS}) {{ nodes {{ path changeType }} }} }}"
                for n in batch
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
                    if exc.status == 401 and self._app is not None:
                        raise  # a refused installation token: _run fetches a new one and asks again
                    if exc.status in (401, 403, 404, 410):
                        return exc.status
                    raise
                return data if isinstance(data, dict) else {}

            data = await self._call(fetch, not_found=phrase("errors.no_graphql", url=self._api_url), kind="graphql")
            if isinstance(data, int):
                self._graphql_unavailable = True
                self._labels_unavailable(f"GraphQL answered HTTP {data}")
                return
            found = graphql_pull_facts(data, info.full_name)
            if found is None:
                self._labels_unavailable("GraphQL cannot see the repository")
                return
            for n in batch:
                self._pr_facts_seen[n] = found.get(n)  # None: no PR by that number
            while len(self._pr_facts_seen) > PR_CACHE:
                self._pr_facts_seen.pop(next(iter(self._pr_facts_seen)))

    def _labels_unavailable(self, why: str) -> None:
        if not self._labels_unavailable_logged:
            self._labels_unavailable_logged = True
            log.info("PR labels of %s (and its PRs' files) are not read for its learned profile: %s.", self.name, why)
