"""A local git repository (bare or not) as a commit source, through the `git` CLI.

The embedded default and the fast path for big histories: one `git log` lists a window with
per-commit numstats; one `git diff-tree --stdin` gives the patches of every commit of the window
whose files are asked for (`expect_files`, then `get_files`), not one git process per commit —
each commit's as soon as git has written it, not once the whole day's is read.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from settings import Settings

from ..core.file_kinds import is_binary_path
from ..core.links import GITHUB_LINKS, GITLAB_LINKS
from ..core.models import (
    HISTORY_PATHS,
    Commit,
    FileChange,
    NotFoundError,
    PastCommit,
    SourceError,
    UsageError,
    Window,
)
from ..i18n import phrase
from .git_batch import Parts, open_batch
from .git_output import over_bytes, parse_raw_numstat, split_patches_stats
from .git_patch_ids import git_patch_ids
from .message import email_user, split_message
from .refrange import newest_release, previous_release

log = logging.getLogger(__name__)

_RS, _US = "\x1e", "\x1f"  # record / unit separators: never in commit messages worth keeping
_LOG_FORMAT = f"{_RS}%H{_US}%P{_US}%an{_US}%ae{_US}%ct{_US}%B{_US}"
# git stops walking at the first commit older than --since (committer dates can go slightly
# backwards after rebases), so list with a margin and filter exactly in Python.
_SINCE_MARGIN = timedelta(days=7)
_MAX_PATCH_BYTES = 1_000_000  # like GitHub: a patch larger than this is "too large to show"
_BATCH = 500  # commits read by one `git diff-tree --stdin` (a bigger day: a few calls)
_READ = 1 << 20  # bytes of git's output read at a time
_EXPECTED_MAX = 5_000  # commits expected at once at most (the rest are read one by one)
_REMOTE = re.compile(r"(?:git@|ssh://git@|https?://(?:[^@/]+@)?)([^/:]+)[:/]([^/]+)/([^/]+?)(?:\.git)?/?$")


class LocalGitSource:
    def __init__(self, path: str, settings: Settings | None = None):  # settings: as every source is opened
        self.spec = path
        self.path = str(Path(path).resolve())
        self._git_dir = self._probe()
        self.cache_id = f"git:{self.path}"
        self.name, self.web_url = self._identity()
        # a clone of a GitLab project links the GitLab way (its origin's host says which)
        self.links = GITLAB_LINKS if self.web_url and "gitlab" in self.web_url.split("/")[2] else GITHUB_LINKS
        # Commits whose files are about to be asked for (sha → first parent, "" for a root), and
        # what a batch read for them and nobody has taken yet (`expect_files`, `get_files`).
        self._expected: dict[str, str] = {}
        self._read: dict[str, tuple[FileChange, ...]] = {}
        # What the batch under way reads and has not given yet: sha → resolved once it has (or
        # has failed: then the commit is read alone). The tasks reading, held while they run.
        self._arriving: dict[str, asyncio.Future[None]] = {}
        self._batches: set[asyncio.Task[None]] = set()

    # --- plumbing ---------------------------------------------------------------------------------
    def _run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", "-C", self.path, "-c", "core.quotePath=false", *args],
            capture_output=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SourceError(
                phrase(
                    "errors.git_failed",
                    command=args[0],
                    path=self.path,
                    detail=err[-1] if err else f"exit {proc.returncode}",
                )
            )
        return proc.stdout.decode("utf-8", "replace")

    async def _arun(self, *args: str, check: bool = True) -> str:
        return await asyncio.to_thread(self._run, *args, check=check)

    def _probe(self) -> str:
        if not os.path.isdir(self.path):
            raise UsageError(phrase("errors.not_a_directory", path=self.path))
        proc = subprocess.run(["git", "-C", self.path, "rev-parse", "--git-dir"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise UsageError(phrase("errors.not_a_git_repo", path=self.path))
        return proc.stdout.strip()

    def _identity(self) -> tuple[str, str | None]:
        """owner/name and a web URL when `origin` points at a GitHub-like host, else the folder's
        name — the folder above when the repository is a bare `repo` (or `repo.git`) folder, as
        mirrors are laid out (`uv/repo`), since "repo" names nothing."""
        url = self._run("config", "--get", "remote.origin.url", check=False).strip()
        match = _REMOTE.match(url)
        if match and "." in match.group(1):
            host, owner, name = match.groups()
            return f"{owner}/{name}", f"https://{host}/{owner}/{name}"
        folder = Path(self.path)
        base = folder.name[:-4] if folder.name.endswith(".git") else folder.name
        if base.lower() == "repo" and folder.parent.name and self._git_dir in (".", self.path):
            base = folder.parent.name  # a bare repository's git dir is the folder itself
        return base or self.path, None

    def commit_url(self, sha: str) -> str | None:
        return self.links.commit_url(self.web_url, sha)

    # --- CommitSource -------------------------------------------------------------------------------
    async def default_branch(self) -> str:
        ref = (await self._arun("symbolic-ref", "--short", "-q", "HEAD", check=False)).strip()
        return ref or "HEAD"

    async def branches(self) -> list[str]:
        """The local branches (`git for-each-ref refs/heads`), by name."""
        out = await self._arun("for-each-ref", "--format=%(refname:short)", "refs/heads/")
        return sorted(line.strip() for line in out.splitlines() if line.strip())

    async def patch_ids(self, shas: list[str]) -> dict[str, str]:
        """sha → `git patch-id --stable` of its diff ('' for none: a merge, an empty commit)."""
        return await asyncio.to_thread(git_patch_ids, self.path, shas)

    async def _verify_branch(self, branch: str) -> str:
        out = await self._arun("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", check=False)
        if not out.strip():
            raise NotFoundError(phrase("errors.no_branch", branch=branch, repo=self.name))
        return branch

    async def list_commits(
        self, window: Window, branch: str | None = None, include_merges: bool = False
    ) -> list[Commit]:
        if window.is_range:
            return await self._list_range(window.base, window.head)
        ref = await self._verify_branch(branch) if branch else "HEAD"
        if not branch and not (await self._arun("rev-parse", "--verify", "--quiet", "HEAD", check=False)).strip():
            return []  # an empty repository has no commits in any window
        # Bounded on both sides (with the margin for committer dates that go backwards): a day ten
        # months behind HEAD costs what today costs, not a numstat of every commit since.
        since = int((window.start_utc - _SINCE_MARGIN).timestamp())
        until = int((window.end_utc + _SINCE_MARGIN).timestamp())
        merges = () if include_merges else ("--no-merges",)
        # Which commits of the margin are the window's, by committer date (no diff: cheap), then
        # the numstat of those only: a big commit a few days away costs nothing.
        listed = await self._arun(
            "log", *merges, "--format=%H %ct", f"--since={since}", f"--until={until}", ref, "--"
        )  # a branch named like a folder (`docs`) is the revision, not a path
        shas = [
            sha
            for sha, _, ctime in (line.partition(" ") for line in listed.splitlines())
            if window.contains(datetime.fromtimestamp(int(ctime), tz=UTC))
        ]
        if not shas:
            return []
        commits = await asyncio.to_thread(self._read_listed, shas)
        commits.sort(key=lambda c: c.committed_at, reverse=True)
        return commits

    def _read_listed(self, shas: list[str]) -> list[Commit]:
        """These commits as the listing gives them (message, parents, numstat; a rename is one
        file, as GitHub counts it), in a worker thread."""
        try:
            return self._parse_log(self._log_of(shas, f"--format={_LOG_FORMAT}", "--numstat", "-M"))
        except SourceError:  # a blob rename detection reads is missing (a partial or damaged clone)
            return self._parse_log(self._log_of(shas, f"--format={_LOG_FORMAT}", "--numstat", "--no-renames"))

    def _log_of(self, shas: list[str], *args: str) -> str:
        """`git log` of exactly these commits, in this order (their SHAs on its standard input)."""
        proc = subprocess.run(
            ["git", "-C", self.path, "-c", "core.quotePath=false", "log", "--no-walk=unsorted", "--stdin", *args, "--"],
            input="\n".join(shas).encode(),
            capture_output=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SourceError(
                phrase("errors.git_failed", command="log", path=self.path, detail=err[-1] if err else "exit")
            )
        return proc.stdout.decode("utf-8", "replace")

    async def _list_range(self, base: str, head: str) -> list[Commit]:
        """The first-parent commits of base..head, newest first, merges among them included (a
        merge on the first-parent line stands for what it brought in: its diff to its first parent)."""
        out = await self._arun(
            "log", "--first-parent", f"--format={_LOG_FORMAT}", "--numstat", "-M", f"{base}..{head}", "--"
        )
        return self._parse_log(out)  # git log's order: newest first along the first-parent line

    # --- ranges of refs (bot/sources/refrange.py) ---------------------------------------------------
    async def resolve_ref(self, ref: str) -> Commit:
        """A tag, branch or SHA as its commit; NotFoundError naming it when there is none."""
        if ref.startswith("-"):  # never an option to git
            raise NotFoundError(phrase("errors.no_ref", ref=ref, repo=self.name))
        sha = (await self._arun("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)).strip()
        if not sha:
            raise NotFoundError(phrase("errors.no_ref", ref=ref, repo=self.name))
        out = await self._arun("log", "-1", f"--format={_LOG_FORMAT}", sha, "--")
        return self._parse_log(out)[0]

    async def pushed_since(self, base: str, head: str, include_merges: bool = False) -> list[Commit] | None:
        if base == head:
            return []
        if not await self.is_ancestor(base, head):  # rewritten, or `base` is gone: the caller reads by date
            return None
        args = ["log", f"--format={_LOG_FORMAT}", "--numstat", "-M", f"{base}..{head}", "--"]
        if not include_merges:
            args.insert(1, "--no-merges")
        commits = self._parse_log(await self._arun(*args))
        commits.sort(key=lambda c: c.committed_at, reverse=True)
        return commits

    async def is_ancestor(self, older: str, newer: str) -> bool:
        proc = await asyncio.to_thread(
            subprocess.run,
            ["git", "-C", self.path, "merge-base", "--is-ancestor", older, newer],
            capture_output=True,
        )
        return proc.returncode == 0

    async def relation(self, base: str, head: str) -> str:
        if base == head:
            return "identical"
        if await self.is_ancestor(base, head):
            return "ahead"
        if await self.is_ancestor(head, base):
            return "behind"
        shared = (await self._arun("merge-base", base, head, check=False)).strip()
        return "diverged" if shared else "unrelated"

    async def release_tags(self, tag: str | None) -> tuple[str | None, str]:
        """(the release before `tag` in version order or None, `tag`); `tag` None: the newest
        release (refrange.newest_release). NotFoundError when there is no such tag at all."""
        tags = (await self._arun("tag", "--list", check=False)).split()
        if tag is None:
            tag = newest_release(tags)
            if tag is None:
                raise NotFoundError(phrase("errors.no_tags", repo=self.name))
        elif tag not in tags:
            raise NotFoundError(phrase("errors.no_tag", tag=tag, repo=self.name))
        return previous_release(tags, tag), tag

    def _parse_log(self, out: str) -> list[Commit]:
        commits = []
        for record in out.split(_RS)[1:]:
            sha, parents, author, email, ctime, message, stats = record.split(_US, 6)
            adds = dels = nfiles = 0
            for line in stats.strip().splitlines():
                parts = line.split("\t")
                if len(parts) == 3:
                    nfiles += 1
                    adds += int(parts[0]) if parts[0].isdigit() else 0
                    dels += int(parts[1]) if parts[1].isdigit() else 0
            commits.append(self._commit(sha, parents, author, ctime, message, adds, dels, nfiles, email_user(email)))
        return commits

    def _commit(self, sha, parents, author, ctime, message, adds=None, dels=None, nfiles=None, login="") -> Commit:
        title, body, pr, reverts = split_message(message)
        return Commit(
            repo=self.name,
            sha=sha,
            title=title,
            body=body,
            author=author.strip() or "unknown",
            committed_at=datetime.fromtimestamp(int(ctime), tz=UTC),
            url=self.commit_url(sha),
            parents=tuple(parents.split()),
            pr_number=pr,
            reverts=reverts,
            additions=adds,
            deletions=dels,
            files_changed=nfiles,
            login=login,
        )

    async def get_commit(self, ref: str) -> Commit:
        ref = ref.strip()
        if not re.fullmatch(r"[0-9a-fA-F]{4,40}", ref):
            raise UsageError(phrase("errors.bad_sha", value=ref))
        proc = await asyncio.to_thread(
            subprocess.run,
            ["git", "-C", self.path, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            if "ambiguous" in proc.stderr:
                raise UsageError(phrase("errors.ambiguous_sha", value=ref, repo=self.name))
            raise NotFoundError(phrase("errors.no_commit", ref=ref, repo=self.name))
        sha = proc.stdout.strip()
        out = await self._arun("log", "-1", f"--format={_LOG_FORMAT}", "--numstat", "-M", sha)
        return self._parse_log(out)[0]

    def expect_files(self, commits: Sequence[Commit]) -> None:
        """These commits' files may be asked for next (a digest's day): the first `get_files` of
        one of them reads all those still expected with one git process, each commit's files
        given as soon as git has written them. Costs nothing when none is asked for (their files
        were cached)."""
        # The latest expectation replaces the one before: a day whose files were all cached
        # leaves nothing behind for the next batch to read in vain (another digest building at
        # the same time reads the rest of its files one by one: slower, the same files).
        self._expected = {c.sha: c.parents[0] if c.parents else "" for c in commits[:_EXPECTED_MAX]}

    async def get_files(self, sha: str) -> tuple[FileChange, ...]:
        if sha in self._expected:
            self._read_expected()
        arriving = self._arriving.get(sha)
        if arriving is not None:  # read by the batch under way: wait for this commit, not the batch
            await asyncio.shield(arriving)
        if sha in self._read:
            return self._read.pop(sha)
        return await self._get_files_alone(sha)

    def _read_expected(self) -> None:
        """Start reading every expected commit's files, _BATCH commits per `git diff-tree
        --stdin` (git_batch.py): each input line is `sha first-parent` (a merge compares with
        its first parent, as alone) or `sha` (a root, with --root). A failed batch leaves the
        commits it had not given yet to be read one by one (and fail one by one, as before)."""
        # A commit a batch under way still reads is left to it: its waiters hold that batch's
        # future, and a second future in its place would be the one resolved (the first, never).
        wanted = [(sha, parent) for sha, parent in self._expected.items() if sha not in self._arriving]
        self._expected.clear()
        self._read.clear()  # what the batch before read and nobody took: at most one batch is kept
        loop = asyncio.get_running_loop()
        futures = {sha: loop.create_future() for sha, _ in wanted}
        self._arriving.update(futures)
        task = loop.create_task(self._read_batches(wanted, futures))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)

    async def _read_batches(self, wanted: list[tuple[str, str]], futures: dict[str, asyncio.Future[None]]) -> None:
        loop = asyncio.get_running_loop()

        def arrived(sha: str, files: tuple[FileChange, ...] | None) -> None:  # (in the loop's thread)
            waiting = futures.get(sha)
            if waiting is None or waiting.done():
                return  # given already
            if files is not None:
                self._read[sha] = files
            if self._arriving.get(sha) is waiting:
                del self._arriving[sha]
            waiting.set_result(None)

        try:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
                try:  # read and split in a worker thread: a busy day's patches are megabytes of text
                    await asyncio.to_thread(
                        self._read_batch, chunk, lambda sha, files: loop.call_soon_threadsafe(arrived, sha, files)
                    )
                except Exception as exc:  # noqa: BLE001 — nobody awaits this task: what it did not give is read alone
                    log.warning(
                        "%s: reading a batch of diffs failed (%s); its commits are read one by one", self.path, exc
                    )
        finally:  # (each commit given, in order, before the thread returned)
            for sha, _ in wanted:
                arrived(sha, None)  # not given: read alone

    def _read_batch(self, chunk: list[tuple[str, str]], give: Callable[[str, tuple[FileChange, ...]], object]) -> None:
        """Each commit's files to `give` as soon as its part of git's output is whole."""
        parents = dict(chunk)
        proc = self._open_batch("".join(f"{sha} {parent}\n" if parent else f"{sha}\n" for sha, parent in chunk))
        parts = Parts([sha for sha, _ in chunk])
        assert proc.stdout is not None  # (a pipe)
        with proc:
            while block := os.read(proc.stdout.fileno(), _READ):  # what git has written, as it comes
                for sha, part in parts.feed(block):
                    give(sha, self._part_files(sha, part, parents))
        if proc.returncode != 0:  # the last parts may be cut short
            raise SourceError(phrase("errors.git_failed", command="diff-tree", path=self.path, detail="batch"))
        for sha, part in parts.end():
            give(sha, self._part_files(sha, part, parents))

    def _open_batch(self, stdin: str) -> subprocess.Popen[bytes]:
        return open_batch(
            ["git", "-C", self.path, "-c", "core.quotePath=false", "diff-tree", "--stdin", "--root", "--always"]
            # no --numstat: git would diff every file a second time for it; the patches are
            # counted instead (`split_patches_stats`)
            + ["-r", "-M", "-z", "--raw", "-p", "--no-color", "--no-ext-diff"],
            stdin,
            {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )

    def _part_files(self, sha: str, part: str, parents: dict[str, str]) -> tuple[FileChange, ...]:
        """A commit's part of the batch's output: its raw entries, an empty entry, its patch text."""
        raw, sep, patch = part.partition("\0\0")
        if not sep:
            raw, patch = part, ""
        return tuple(self._files(raw, patch, numstat=functools.partial(self._numstat, sha, parents)))

    async def _get_files_alone(self, sha: str) -> tuple[FileChange, ...]:
        parents = (await self._arun("rev-list", "--parents", "-n", "1", sha)).split()[1:]
        base = [parents[0]] if parents else ["--root"]
        raw = await self._arun("diff-tree", "-r", "-M", "-z", "--numstat", "--raw", "--no-color", *base, sha)
        patch = await self._arun("diff-tree", "-r", "-M", "-p", "--no-color", "--no-ext-diff", *base, sha)
        return tuple(self._files(raw, patch))

    def _numstat(self, sha: str, parents: dict[str, str] | None) -> str:
        """`diff-tree --numstat` of one commit (against the parent the batch compared it with)."""
        parent = (parents or {}).get(sha)
        return self._run(
            "diff-tree", "-r", "-M", "-z", "--numstat", "--no-color", *([parent] if parent else ["--root"]), sha
        )

    def _files(self, raw: str, patch_text: str, numstat: Callable[[], str] | None = None) -> list[FileChange]:
        """The files of `raw` (`--raw`, with `--numstat` or without), their patches from
        `patch_text`. Without a numstat, a file's lines added and deleted are counted from its
        patch; a file with no hunk that is not said to be binary — a pure rename, a mode change
        — may be binary (git says so only in the numstat): then `numstat()` is asked."""
        entries, stats = parse_raw_numstat(raw)
        patches, counted = split_patches_stats(patch_text)
        if not stats and entries:
            unsure = any(
                status not in ("added", "removed") and counted.get(new, (0, 0))[0] is not None and not patches.get(new)
                for status, _, new in entries
            )
            stats = parse_raw_numstat(numstat())[1] if unsure and numstat is not None else counted
        files = []
        for status, old, new in entries:
            adds, dels = stats.get(new, (None, None))
            binary = adds is None or is_binary_path(new)
            patch = patches.get(new)
            if patch is not None and over_bytes(patch, _MAX_PATCH_BYTES):
                patch = None
            files.append(
                FileChange(
                    path=new,
                    status=status,
                    additions=adds or 0,
                    deletions=dels or 0,
                    patch=None if binary else patch,
                    previous_path=old if old != new else None,
                    binary=binary,
                )
            )
        return files

    async def read_file(self, path: str, ref: str | None = None) -> str | None:
        """A file's text at `ref` (the default branch when None); None when it does not exist."""
        ref = ref or await self.default_branch()
        if not await self._exists(ref, path):
            return None
        return await self._arun("show", f"{ref}:{path}")

    async def _exists(self, ref: str, path: str) -> bool:
        proc = await asyncio.to_thread(
            subprocess.run, ["git", "-C", self.path, "cat-file", "-e", f"{ref}:{path}"], capture_output=True
        )
        return proc.returncode == 0

    # --- history, for the learned profile (bot/taste) ----------------------------------------------
    async def tip_before(self, before: datetime, branch: str | None = None) -> str | None:
        """The branch's newest commit (first parents) committed before `before`; None if none."""
        ref = branch or "HEAD"
        stamp = int(before.timestamp()) - 1
        out = await self._arun("rev-list", "-1", "--first-parent", f"--before={stamp}", ref, check=False)
        return out.strip() or None

    async def list_paths(self, ref: str) -> list[str]:
        return (await self._arun("ls-tree", "-r", "--name-only", "-z", ref)).split("\0")[:-1]

    async def history(self, ref: str, limit: int) -> list[PastCommit]:
        """Up to `limit` commits reachable from `ref` (merges left out, as digests list them), newest
        first, with the paths they touched (names, and a rename as its new path, as GitHub lists a
        pull request's files: finding renames reads the blobs of added/deleted pairs). Read and
        parsed in a worker thread (2,000 messages split are not for the event loop)."""

        def read() -> list[PastCommit]:
            try:
                return _parse_history(self._run("log", f"-n{limit}", "--no-merges", *_HISTORY_FORMAT, "-M", ref, "--"))
            except SourceError:  # a blob rename detection reads is missing (a partial or damaged clone)
                out = self._run("log", f"-n{limit}", "--no-merges", *_HISTORY_FORMAT, "--no-renames", ref, "--")
                return _parse_history(out)

        return await asyncio.to_thread(read)

    async def history_shas(self, ref: str, limit: int) -> list[str]:
        """The SHAs `history(ref, limit)` lists, in its order, without reading any commit: with
        `history_of`, a profile learnt the day before reads only what the branch gained since."""
        out = await self._arun("rev-list", f"-n{limit}", "--no-merges", ref, "--")
        return out.split()

    async def history_of(self, shas: list[str]) -> list[PastCommit]:
        """These commits as `history` reads them, in this order."""

        if not shas:
            return []

        def read() -> list[PastCommit]:
            try:
                return _parse_history(self._log_of(shas, *_HISTORY_FORMAT, "-M"))
            except SourceError:  # as in `history`
                return _parse_history(self._log_of(shas, *_HISTORY_FORMAT, "--no-renames"))

        return await asyncio.to_thread(read)

    async def path_ids(self, ref: str) -> dict[str, str]:
        """Every file at `ref` → its blob id, in `list_paths` order: whether the release notes
        changed since a day is known without reading them."""
        out = await self._arun("ls-tree", "-r", "-z", ref)
        ids: dict[str, str] = {}
        for entry in out.split("\0"):
            meta, _, path = entry.partition("\t")
            if path:
                ids[path] = meta.rsplit(" ", 1)[-1]
        return ids

    async def prefetch_prs(self, commits: list[Commit]) -> None:
        return None  # a local clone has no pull requests

    async def pr_description(self, number: int) -> str | None:
        return None  # a local clone has no pull requests

    async def pr_commit(self, number: int) -> Commit | None:
        """Squash/rebase merges name the PR in the title: `… (#123)`."""
        if not (await self._arun("rev-parse", "--verify", "--quiet", "HEAD", check=False)).strip():
            return None
        out = await self._arun(
            "log", "-1", "-F", f"--grep=(#{number})", f"--format={_LOG_FORMAT}", "--numstat", "-M", "HEAD"
        )
        commits = [c for c in self._parse_log(out) if c.pr_number == number]
        return commits[0] if commits else None


_HISTORY_FORMAT = (f"--format={_RS}%H{_US}%ct{_US}%B{_US}", "--name-status")


def _parse_history(out: str) -> list[PastCommit]:
    found = []
    for record in out.split(_RS)[1:]:
        sha, ctime, message, changes = record.split(_US, 3)
        title, _body, pr, _reverts = split_message(message)
        paths, added = [], []
        for line in sorted(changes.strip().splitlines(), key=lambda x: x.rsplit("\t", 1)[-1])[:HISTORY_PATHS]:
            status, *names = line.split("\t")
            if names and names[-1]:  # a rename (`R100 old new`) is its new path
                paths.append(names[-1])
                if status == "A":
                    added.append(names[-1])
        found.append(PastCommit(sha, datetime.fromtimestamp(int(ctime), tz=UTC), title, pr, tuple(paths), tuple(added)))
    return found
