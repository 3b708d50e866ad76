"""Which commits a bot-started thread is about, what was said in it, and how a question picks
its commit: a SHA prefix, `#PR`, distinctive title words, else the commit last asked about.

  thread:{platform}:{channel}:{root}    JSON ThreadInfo (TTL 30 days)
  history:{platform}:{channel}:{root}   list of {role, text, sha} turns (last 20, TTL 30 days)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..core.models import Digest, to_dict

THREAD_TTL = 30 * 86400
MEMORY_KEEP = 20
_HEX = re.compile(r"\b[0-9a-fA-F]{4,40}\b")
_PR = re.compile(r"#(\d{1,9})\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{2,}|[0-9]+[A-Za-z][A-Za-z0-9_]*")
_STOP = frozenset(
    """the and for with from into this that what which when where will would could should does did
can about after before why how are was were has have had its not but use used using via per all any more most
add adds added fix fixes fixed update updates updated remove removes removed support make change changes
bump misc minor commit commits pr change""".split()
)


@dataclass(frozen=True)
class ThreadCommit:
    sha: str
    title: str
    pr: int | None = None
    importance: str = "medium"


@dataclass(frozen=True)
class ThreadInfo:
    repo: str  # the repository as commands name it (owner/name or the default path)
    lang: str
    tz: str
    label: str  # the digest's window label, or "" for an ask thread
    commits: tuple[ThreadCommit, ...] = ()
    focus: str | None = None  # SHA of the commit last asked about in this thread
    # A question about a period (bot/period_questions/): its window (as to_dict gives it), kept by the
    # thread's follow-ups, and the repositories with their branches it is about.
    period: dict | None = None
    repos: tuple[tuple[str, str | None], ...] = ()

    def by_sha(self, sha: str) -> ThreadCommit | None:
        return next((c for c in self.commits if c.sha == sha), None)


@dataclass(frozen=True)
class Resolution:
    sha: str | None = None  # the one commit the question is about
    candidates: tuple[ThreadCommit, ...] = field(default=())  # ask the user to choose among these
    outside_ref: str | None = None  # a SHA-like word that names no commit in the thread


def resolve_commit(question: str, info: ThreadInfo) -> Resolution:
    """Pure: decide which commit of the thread a question is about."""
    commits = info.commits
    for word in _HEX.findall(question):
        hits = [c for c in commits if c.sha.lower().startswith(word.lower())]
        if len(hits) == 1:
            return Resolution(sha=hits[0].sha)
        if len(hits) > 1:
            return Resolution(candidates=tuple(hits))
    for number in _PR.findall(question):
        hits = [c for c in commits if c.pr == int(number)]
        if hits:
            return Resolution(sha=hits[0].sha)
    scored = _title_scores(question, commits)
    if scored:
        best = scored[0][0]
        top = [c for score, c in scored if score == best]
        if best >= 2 and len(top) == 1:
            return Resolution(sha=top[0].sha)
        if best >= 2:
            return Resolution(candidates=tuple(top[:5]))
    sha_like = next((w for w in _HEX.findall(question) if len(w) >= 7 and re.search(r"\d", w)), None)
    if sha_like:
        return Resolution(outside_ref=sha_like)
    if info.focus:
        return Resolution(sha=info.focus)
    if len(commits) == 1:
        return Resolution(sha=commits[0].sha)
    rank = {"high": 0, "medium": 1, "low": 2}
    return Resolution(candidates=tuple(sorted(commits, key=lambda c: rank.get(c.importance, 1))[:5]))


def _title_scores(question: str, commits: Sequence[ThreadCommit]) -> list[tuple[int, ThreadCommit]]:
    """Score titles by shared significant words; a word found in only one title counts double."""
    asked = {w.lower().strip(".-") for w in _WORD.findall(question)} - _STOP
    if not asked or not commits:
        return []
    words_of = {c.sha: {w.lower().strip(".-") for w in _WORD.findall(c.title)} - _STOP for c in commits}
    frequency: dict[str, int] = {}
    for words in words_of.values():
        for w in words:
            frequency[w] = frequency.get(w, 0) + 1
    scored = []
    for c in commits:
        shared = asked & words_of[c.sha]
        score = sum(2 if frequency[w] == 1 else 1 for w in shared)
        if score:
            scored.append((score, c))
    scored.sort(key=lambda pair: -pair[0])
    return scored


def commit_ref(text: str) -> str | None:
    """The commit a free-text question names outside any thread: a SHA (7+ hex characters) or `#PR`."""
    return next((w for w in _HEX.findall(text) if len(w) >= 7), None) or next(
        (f"#{n}" for n in _PR.findall(text)), None
    )


class Threads:
    def __init__(self, store):
        self.store = store

    def _key(self, platform: str, channel: str, root: str) -> str:
        return self.store.k("thread", platform, channel, root)

    def _memory_key(self, platform: str, channel: str, root: str) -> str:
        return self.store.k(
            "history", platform, channel, root
        )  # (the key's name predates the method's: kept, so kept threads are found)

    async def remember_digest(self, platform: str, channel: str, root: str, repo: str, digest: Digest) -> None:
        commits = tuple(
            ThreadCommit(e.commit.sha, e.commit.title, e.commit.pr_number, e.importance.value) for e in digest.entries
        )
        await self.save(
            platform, channel, root, ThreadInfo(repo, digest.lang, digest.window.tz, digest.window.label, commits)
        )

    async def save(self, platform: str, channel: str, root: str, info: ThreadInfo) -> None:
        await self.store.set_json(self._key(platform, channel, root), to_dict(info), ttl=THREAD_TTL)

    async def get(self, platform: str, channel: str, root: str) -> ThreadInfo | None:
        raw = await self.store.get_json(self._key(platform, channel, root))
        if not raw:
            return None
        return ThreadInfo(
            **{
                **raw,
                "commits": tuple(ThreadCommit(**c) for c in raw.get("commits", ())),
                "repos": tuple(tuple(r) for r in raw.get("repos", ())),
            }
        )

    async def focus(self, platform: str, channel: str, root: str, info: ThreadInfo, sha: str) -> ThreadInfo:
        updated = replace(info, focus=sha)
        await self.save(platform, channel, root, updated)
        return updated

    async def add_turn(self, platform: str, channel: str, root: str, role: str, text: str, sha: str) -> None:
        await self.store.push_capped(
            self._memory_key(platform, channel, root),
            {"role": role, "text": text, "sha": sha},
            MEMORY_KEEP,
            THREAD_TTL,
        )

    async def memory(self, platform: str, channel: str, root: str) -> list[dict]:
        """The thread's memory: its last MEMORY_KEEP turns, oldest first."""
        return await self.store.list_json(self._memory_key(platform, channel, root))
