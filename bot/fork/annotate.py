"""A digest read against a fork: each upstream commit's `downstream` (the fork-patched files it
touches, the fork's hunks there, whether cherry-picking it onto the fork's branch conflicts).

Where the objects come from:
- upstream: a local repository is read in place; a GitHub repository's branch is fetched into a
  mirror under DATA_DIR (the fork's mirror when the fork is on GitHub too);
- fork: a local repository in place, or a GitHub fork through its mirror.
Both stores are read together through an ObjectView (git.py): nothing is checked out and nothing
of the user's is written.

A commit already in the fork (an ancestor of its tip) is left without a flag; a commit that
touches no file the fork patches cannot conflict with the fork's patches and is not merged at all
(the one exception, a directory rename on one side and a new file in it on the other, is left out
on purpose: it costs a merge per commit of the day).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping
from dataclasses import replace

from settings import Settings

from ..core.models import Digest, Downstream, ForkInfo, SourceError
from ..i18n import phrase
from ..sources.registry import fetch_spec
from .conflict import cherry_pick_conflicts
from .git import GitFailed, ObjectView, base_env, objects_dir
from .mirror import Mirror, git_tokens
from .naming import ForkError, ForkNotFound, ForkSpec
from .patches import read_patches

UPSTREAM_REF = "refs/digest-bot/upstream/{repo}/{branch}"
FORK_REF = "refs/digest-bot/fork/{branch}"


def _local_git_dir(path: str, lang: str, name: str) -> str:
    proc = subprocess.run(
        ["git", "-C", path, "rev-parse", "--absolute-git-dir"], capture_output=True, text=True, env=base_env()
    )
    if not os.path.isdir(path) or proc.returncode != 0:
        raise ForkError(phrase("downstream.not_a_repo", path=name))
    return proc.stdout.strip()


def _local_tip(git_dir: str, branch: str | None) -> tuple[str | None, str]:
    """(commit, branch name) of `branch` (None: HEAD) in a local repository."""
    env = base_env()
    name = branch
    if name is None:
        ref = subprocess.run(
            ["git", "--git-dir", git_dir, "symbolic-ref", "--short", "-q", "HEAD"],
            capture_output=True,
            text=True,
            env=env,
        ).stdout.strip()
        name = ref or "HEAD"
    for candidate in [name] if name == "HEAD" else [f"refs/heads/{name}", name]:
        proc = subprocess.run(
            ["git", "--git-dir", git_dir, "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
            capture_output=True,
            text=True,
            env=env,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip(), name
    return None, name


class _Reader:
    """Locate the upstream and fork objects for one digest (sync: run it in a thread)."""

    def __init__(
        self,
        digest: Digest | None,
        source,
        spec: ForkSpec,
        settings: Settings,
        lang: str,
        tokens: Mapping[str, str] | None = None,
    ):
        self.digest, self.source, self.spec, self.settings, self.lang = digest, source, spec, settings, lang
        self.tokens = tokens  # a GitHub App's installation tokens by clone URL (mirror.git_tokens)
        self.mirror: Mirror | None = None
        if spec.kind != "path":  # a remote fork: read from a mirror git fetches it into
            self.mirror = Mirror(settings.data_dir, spec.where, settings, lang, tokens)

    def fork(self) -> tuple[str, str, str]:
        """(git dir, tip, branch name) of the fork."""
        if self.spec.kind == "path":
            git_dir = _local_git_dir(self.spec.where, self.lang, self.spec.raw)
            tip, branch = _local_tip(git_dir, self.spec.branch)
            if tip is None:
                raise ForkNotFound(phrase("downstream.no_branch", branch=branch, fork=self.spec.name))
            return git_dir, tip, branch
        assert self.mirror is not None
        branch = self.spec.branch or "HEAD"
        tip = self.mirror.fetch_branch(self.spec.where, self.spec.branch, FORK_REF.format(branch=branch))
        return self.mirror.git_dir, tip, branch

    def upstream(self, force: bool = False) -> tuple[str, str]:
        """(git dir, tip) of the digest's branch upstream."""
        assert self.digest is not None  # only open_fork reads without a digest, and it reads the fork alone
        branch = self.digest.branch
        path = getattr(self.source, "path", None)
        if path and os.path.isdir(path):
            git_dir = _local_git_dir(path, self.lang, self.source.name)
            tip, _ = _local_tip(git_dir, branch)
            if tip is None:
                raise ForkNotFound(phrase("downstream.no_branch", branch=branch, fork=self.source.name))
            return git_dir, tip
        repo = fetch_spec(self.source)  # its registry name: fetched into the fork's mirror, or one of its own
        mirror = self.mirror or Mirror(self.settings.data_dir, repo, self.settings, self.lang, self.tokens)
        ref = UPSTREAM_REF.format(repo=repo.replace("/", "+"), branch=branch)
        return mirror.git_dir, mirror.fetch_branch(repo, branch, ref, force=force)


def open_fork(spec: ForkSpec, settings: Settings, lang: str, tokens: Mapping[str, str] | None = None) -> str:
    """The fork's tip (a GitHub fork fetched into its mirror): its problems said early."""
    return _Reader(None, None, spec, settings, lang, tokens).fork()[1]


def annotate(
    digest: Digest,
    source,
    spec: ForkSpec,
    settings: Settings,
    lang: str | None = None,
    tokens: Mapping[str, str] | None = None,
) -> Digest:
    """`digest` with each entry's `downstream` filled in and the digest's `fork` set; `tokens`:
    the GitHub App's, for the mirrors' fetches (mirror.git_tokens)."""
    lang = lang or digest.lang
    reader = _Reader(digest, source, spec, settings, lang, tokens)
    fork_dir, fork_tip, fork_branch = reader.fork()
    up_dir, up_tip = reader.upstream()
    timeout = settings.fork_fetch_timeout
    view = ObjectView(up_dir, [objects_dir(fork_dir)], timeout=timeout)
    try:
        shas = [e.commit.sha for e in digest.entries]
        if len(view.present(shas)) < len(shas) and not getattr(source, "path", None):
            view.close()  # commits newer than the last fetch: fetch once more, now
            up_dir, up_tip = reader.upstream(force=True)
            view = ObjectView(up_dir, [objects_dir(fork_dir)], timeout=timeout)
        return _annotate(digest, view, spec, up_tip, fork_tip, fork_branch, lang)
    except GitFailed as exc:
        raise SourceError(phrase("downstream.git_failed", fork=spec.display, reason=str(exc))) from None
    finally:
        view.close()


def _annotate(
    digest: Digest, view: ObjectView, spec: ForkSpec, up_tip: str, fork_tip: str, fork_branch: str, lang: str
) -> Digest:
    base = view.merge_base(up_tip, fork_tip)
    if base is None:
        raise ForkError(phrase("downstream.unrelated", fork=spec.display, repo=digest.repo))
    patches = read_patches(view, base, fork_tip)
    present = view.present([e.commit.sha for e in digest.entries])
    # One walk: which of the day's commits the fork does not have yet.
    outside = set(view.out("rev-list", *present, f"^{fork_tip}").split()) if present else set()
    entries = []
    for entry in digest.entries:
        sha = entry.commit.sha
        if sha not in outside or not patches.hunks:
            entries.append(replace(entry, downstream=None))
            continue
        parent = view.first_parent(sha)
        hit = patches.touched(view.touched_paths(sha, parent))
        if not hit:
            entries.append(replace(entry, downstream=None))
            continue
        pick = cherry_pick_conflicts(view, sha, fork_tip, parent=parent)
        entries.append(
            replace(
                entry,
                downstream=Downstream(
                    patched_files=hit, conflict=pick.conflict, hunks=sum(patches.hunks[p] for p in hit)
                ),
            )
        )
    info = ForkInfo(name=spec.name, branch=fork_branch, merge_base=base, files=len(patches.hunks))
    return replace(digest, entries=tuple(entries), fork=info)


async def check_fork(spec: ForkSpec, settings: Settings, lang: str) -> str:
    """The fork's tip, or ForkError / ForkNotFound now (before a long analysis), fetching a
    GitHub fork into its mirror."""
    tokens = await git_tokens(settings, [spec.where] if spec.kind != "path" else [])
    return await asyncio.to_thread(open_fork, spec, settings, lang, tokens)
