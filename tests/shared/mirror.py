"""A local git repository served by the fake GitHub as GitHub would serve it: the same commits
(same SHAs, messages, authors, dates, parents), each commit's files with GitHub's `patch` (the
hunks from the first `@@`, none for a binary file or an empty one), renames with
`previous_filename`, the text files' contents at every commit, its branch and its tags, and a
merged pull request for each commit whose title names one (`… (#12)`: a squash merge, whose files
are the commit's). What the bot reads through PyGithub is then what a clone of the same
repository shows: the two sources of one repository.

Read with plain git (not the bot's own reader), so that a bug in the bot's local reader is not
copied into the fake.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bot.sources.message import split_message
from tests.fakes.github_server import FakeFile, FakeGitHub
from tests.gitrepo import GitRepo

_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "modified"}


def mirror(repo: GitRepo, fake: FakeGitHub, full_name: str, branch: str = "main") -> None:
    """Every commit of `branch` (oldest first) and every tag of `repo` into `fake` as `full_name`."""
    fake.add_repo(full_name, default_branch=branch)
    shas = repo.git("rev-list", "--reverse", "--topo-order", branch).split()
    for sha in shas:
        fields = repo.git("show", "-s", "--format=%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
        parents, author, email, authored, committer, committer_email, committed, message = fields.split("\0", 7)
        files, contents = _files(repo, sha, parents.split()[:1])
        fake.add_commit(
            full_name,
            message.rstrip("\n"),
            sha=sha,
            parents=parents.split(),
            author=author,
            email=email,
            authored_at=datetime.fromisoformat(authored).astimezone(UTC),
            committer=committer,
            committer_email=committer_email,
            committed_at=datetime.fromisoformat(committed).astimezone(UTC),
            files=files,
            contents=contents,
        )
        title, _body, pr, _reverts = split_message(message)
        if pr is not None:
            fake.add_pull(full_name, pr, title=title, body="", merge_commit_sha=sha, files=files)
    for line in repo.git(
        "for-each-ref", "refs/tags", "--format=%(refname:short) %(*objectname) %(objectname)"
    ).splitlines():
        name, *targets = line.split()
        fake.add_tag(full_name, name, targets[0])  # an annotated tag's commit, else the tag's own


def _files(repo: GitRepo, sha: str, base: list[str]) -> tuple[list[FakeFile], dict[str, str | None]]:
    against = base or ["--root"]
    raw = repo.git("diff-tree", "-r", "-M", "-z", "--no-commit-id", "--raw", "--numstat", *against, sha)
    tokens = raw.split("\0")
    entries: list[tuple[str, str, str]] = []
    counts: dict[str, tuple[str, str]] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(":"):
            letter = tok.split()[-1][0]
            if letter in "RC":
                entries.append((_STATUS[letter], tokens[i + 1], tokens[i + 2]))
                i += 3
            else:
                entries.append((_STATUS.get(letter, "modified"), tokens[i + 1], tokens[i + 1]))
                i += 2
        elif "\t" in tok:
            adds, dels, path = tok.split("\t", 2)
            if path == "":
                path, i = tokens[i + 2], i + 3
            else:
                i += 1
            counts[path] = (adds, dels)
        else:
            i += 1
    files: list[FakeFile] = []
    contents: dict[str, str | None] = {}
    for status, old, new in entries:
        adds, dels = counts.get(new, ("-", "-"))
        binary = not adds.isdigit()
        patch = None if binary else _patch(repo, sha, against, old, new)
        files.append(
            FakeFile(
                new,
                status,
                additions=int(adds) if adds.isdigit() else 0,
                deletions=int(dels) if dels.isdigit() else 0,
                patch=patch,
                previous_filename=old if old != new else None,
            )
        )
        if old != new:
            contents[old] = None
        contents[new] = None if status == "removed" or binary else repo.git("show", f"{sha}:{new}")
    return files, contents


def _patch(repo: GitRepo, sha: str, against: list[str], old: str, new: str) -> str | None:
    """GitHub's `patch` of one file: its hunks, from the first `@@` on (None for a change of mode
    or an empty file: GitHub sends none)."""
    paths = [old, new] if old != new else [new]
    text = repo.git("diff-tree", "-p", "-M", "--no-color", "--no-ext-diff", *against, sha, "--", *paths)
    at = re.search(r"^@@", text, flags=re.M)
    return text[at.start() :].rstrip("\n") if at else None  # GitHub sends no patch without a hunk
