"""Several branches per subscription (issue 36 §4): `branch main release/*`.

A branch set is kept as it was typed, its patterns separated by spaces (a git branch name holds
no space), so a subscription, a delivery and a digest carry it in the one `branch` string they
always had: a subscription stored before this (one branch, or none: the default branch) reads the
same, and the digest cache keys, which hold that string, tell `main` from `main release/*`.

One plain name (no glob) is listed as before, without listing the repository's branches. A set
with a glob, or several names, lists the branches through the source (`CommitSource.branches`),
matches them with fnmatch's globs, and lists each; then:

- a commit reachable from several followed branches is listed once, naming every one it is on;
- a cherry-pick onto another followed branch is a backport of its original: git's
  `(cherry picked from commit SHA)` line names it, else the same patch does (`patch_ids`: git's
  `patch-id --stable` for a local repository, the same digest of the patches the source already
  serves for GitHub and GitLab). A backport whose original is listed too is folded into the
  original's entry (the fix appears once, naming both branches); one whose original is older
  than the window stays, marked as the backport of that SHA.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from ..core.models import Commit, FileChange, NotFoundError, UsageError, Window
from ..i18n import phrase

MAX_BRANCHES = 20  # branches one set may follow: each is one listing per digest
NAMED_IN_ERROR = 5  # existing branches named when a pattern matches none
_GLOB = re.compile(r"[*?\[]")
_PATTERN = re.compile(
    r"^(?![-/.])(?!.*(?:\.\.|//|/\.|\.lock$|/$))[A-Za-z0-9._/*?\[\]!\-]{1,200}$"
)  # git's ref rules, in short
_PICKED = re.compile(r"\(cherry\s+picked\s+from\s+commit\s+([0-9a-f]{7,40})\)")  # git's `cherry-pick -x` line


def patterns_of(spec: str | None) -> tuple[str, ...]:
    """The patterns of a branch set as typed or stored ("main release/*"); () for none."""
    return tuple(dict.fromkeys((spec or "").replace(",", " ").split()))


def spec_of(patterns: Sequence[str]) -> str | None:
    """How a branch set is kept: its patterns joined by a space; None for none (the default)."""
    kept = tuple(dict.fromkeys(p for p in patterns if p))
    return " ".join(kept) if kept else None


def is_several(spec: str | None) -> bool:
    """Does the set need the repository's branches listed (a glob, or more than one name)?"""
    pats = patterns_of(spec)
    return len(pats) > 1 or any(_GLOB.search(p) for p in pats)


def bad_pattern(spec: str | None) -> str | None:
    """The first pattern that is no branch name or glob, else None."""
    return next((p for p in patterns_of(spec) if not _PATTERN.match(p)), None)


async def resolve(source, spec: str | None) -> list[str]:
    """The branches a set follows, in the order of its patterns (then by name): NotFoundError in
    one sentence naming a few existing branches when a pattern matches none; UsageError when more
    than MAX_BRANCHES match."""
    pats = patterns_of(spec)
    if not pats:
        return [await source.default_branch()]
    if not is_several(spec):
        return [pats[0]]
    existing = sorted(await source.branches())
    followed: list[str] = []
    for pat in pats:
        hits = [b for b in existing if fnmatch.fnmatchcase(b, pat)]
        if not hits:
            some = ", ".join(existing[:NAMED_IN_ERROR]) + (", …" if len(existing) > NAMED_IN_ERROR else "")
            raise NotFoundError(phrase("errors.branch_pattern_none", pattern=pat, repo=source.name, some=some or "-"))
        followed += [b for b in hits if b not in followed]
    if len(followed) > MAX_BRANCHES:
        raise UsageError(phrase("errors.branch_pattern_many", n=len(followed), most=MAX_BRANCHES, spec=" ".join(pats)))
    return followed


@dataclass
class Followed:
    """A window's commits on a branch set: each once, newest first, with the branches it is on
    and, for a backport, the SHA of its original (`backport_of`) or, for an original whose
    backports are listed too, those backports (`backports`: SHAs folded into its entry)."""

    commits: list[Commit]
    on: dict[str, tuple[str, ...]] = field(default_factory=dict)
    backport_of: dict[str, str] = field(default_factory=dict)
    backports: dict[str, tuple[str, ...]] = field(default_factory=dict)


Files = Callable[[str], Awaitable[tuple[FileChange, ...]]]


async def list_followed(
    source,
    window: Window,
    spec: str | None,
    include_merges: bool,
    files: Files | None = None,
    *,
    backports: bool = True,
) -> Followed:
    """The commits of `window` on every branch of the set (see the module's docstring). `files`
    reads a commit's patches (the builder's cache) for the same-patch test of sources without
    their own `patch_ids`. `backports=False`: each commit once, no backport looked for (counting)."""
    if window.is_range:  # a release range: its cherry-picks are told as backports (git's line)
        listed = await source.list_commits(window, None, include_merges)
        return Followed(listed, backport_of={c.sha: o for c in listed if (o := picked_from(c)) and backports})
    if not is_several(spec):
        branch = patterns_of(spec)[0] if patterns_of(spec) else None
        return Followed(await source.list_commits(window, branch, include_merges))
    branches = await resolve(source, spec)
    by_sha: dict[str, Commit] = {}
    on: dict[str, list[str]] = {}
    for branch in branches:
        for c in await source.list_commits(window, branch, include_merges):
            by_sha.setdefault(c.sha, c)
            on.setdefault(c.sha, []).append(branch)
    commits = sorted(by_sha.values(), key=lambda c: c.committed_at, reverse=True)
    followed = Followed(commits, {s: tuple(b) for s, b in on.items()})
    if backports:
        await _mark_backports(source, followed, branches[0], files)
    return followed


async def _mark_backports(source, followed: Followed, first: str, files: Files | None) -> None:
    """Cherry-picks: by git's line, else by the same patch as a commit of the first branch."""
    commits = followed.commits
    shas = {c.sha for c in commits}
    picks: dict[str, str] = {}
    for c in commits:
        if original := picked_from(c):
            picks[c.sha] = next((s for s in shas if s.startswith(original)), original)
    # the same patch: a commit off the first branch whose patch is a first-branch commit's
    off_first = [c for c in commits if first not in followed.on.get(c.sha, ()) and c.sha not in picks]
    on_first = [c for c in commits if first in followed.on.get(c.sha, ())]
    if off_first and on_first:
        ids = await patch_ids(source, [c.sha for c in (*off_first, *on_first)], files)
        originals: dict[str, str] = {}
        for c in reversed(on_first):  # the oldest with a patch is the original
            if ids.get(c.sha):
                originals.setdefault(ids[c.sha], c.sha)
        for c in off_first:
            if (pid := ids.get(c.sha)) and pid in originals:
                picks[c.sha] = originals[pid]
    folded: dict[str, list[str]] = {}
    for pick, original in picks.items():
        if original in shas and original != pick:  # both listed: the fix appears once
            folded.setdefault(original, []).append(pick)
            merged = list(followed.on.get(original, ()))
            merged += [b for b in followed.on.get(pick, ()) if b not in merged]
            followed.on[original] = tuple(merged)
        elif original != pick:
            followed.backport_of[pick] = original
    followed.backports = {o: tuple(p) for o, p in folded.items()}
    gone = {p for ps in folded.values() for p in ps}
    followed.commits = [c for c in commits if c.sha not in gone]


def picked_from(commit: Commit) -> str:
    """The SHA git's `cherry-pick -x` line names in the message ('' for none)."""
    m = _PICKED.search(commit.body or "")
    return m.group(1) if m else ""


async def patch_ids(source, shas: list[str], files: Files | None) -> dict[str, str]:
    """sha → its patch id ('' when it has no patch to compare): the source's own (`git patch-id
    --stable` for a local repository) when it has one, else `patch_id` of the files it serves."""
    own = getattr(source, "patch_ids", None)
    if own is not None:
        return await own(shas)
    out: dict[str, str] = {}
    for sha in shas:
        out[sha] = patch_id(await (files(sha) if files is not None else source.get_files(sha)))
    return out


def patch_id(changes: Sequence[FileChange]) -> str:
    """A patch id in the spirit of git's `--stable` one, from the patches GitHub and GitLab serve:
    the files in path order, each patch's added and removed lines with whitespace removed, line
    numbers and context ignored (a cherry-pick onto another base shifts both). '' when a file
    has no patch (binary, too large): such a commit is never called the same as another."""
    digest = hashlib.sha1()
    if not changes:
        return ""
    for f in sorted(changes, key=lambda f: f.path):
        if f.patch is None:
            return ""
        digest.update(f"\0{f.path}\0".encode())
        for line in f.patch.splitlines():
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                digest.update((line[0] + "".join(line[1:].split())).encode())
    return digest.hexdigest()
