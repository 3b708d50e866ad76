"""Readers' level corrections: "this commit's level is too high / too low" (issue 24, item 3).

A correction sets one commit's importance level (high / medium / low) in one repository from then
on. Each person holds at most one correction per commit — their latest, by its time — and the
effective correction of a commit is the latest across people. Nothing expires: corrections live
in Redis without a TTL, like the subscriptions.

Corrections are kept per workspace (issue 35 §4): a correction made in one workspace of a
platform that serves several (Slack OAuth installs, a Feishu store app) is that workspace's alone.
Its scope is `{platform}:{tenant}` (bot/core/tenants.py's `scope_of`); a conversation of a
platform serving one workspace, and the CLI, use the shared scope "" — the keys and behaviour of
before. A digest shown in a
conversation is overlaid with the shared scope's corrections and then its own scope's (its own
wins for the same commit); never another workspace's.

Keys (under REDIS_PREFIX):
  corrections:repo:{repo}   a hash: field `{sha}:{who}` → JSON {sha, level, who, reason, at}
  corrections:repos         a set: the repositories that hold corrections (what `export` walks)
  corrections:ws:{scope}:repo:{repo}, corrections:ws:{scope}:repos   the same, of one workspace

`repo` is the repository's display name (`CommitSource.name`: owner/name, or a local folder's
name), `sha` the full 40-hex SHA (a caller resolves an abbreviation through its source first),
`at` ISO 8601 in UTC to the second (`2026-01-28T01:30:00+00:00`): one fixed format, so that two
times compare as strings inside Redis.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..core.store import Store
from ..core.tenants import SHARED
from .scores import LEVELS

TOO_HIGH = "too_high"
TOO_LOW = "too_low"
DIRECTIONS = (TOO_HIGH, TOO_LOW)

_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def nudge(level: str, direction: str) -> str | None:
    """The level one step the other way: `too_high` one step down (high → medium → low),
    `too_low` one step up; None when `level` is already at that end (low is not "too high"-able
    further), so the caller can say so."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}")
    step = LEVELS.index(level) + (1 if direction == TOO_HIGH else -1)  # LEVELS runs high → low
    return LEVELS[step] if 0 <= step < len(LEVELS) else None


def stamp(at: datetime) -> str:
    """`at` as stored: ISO 8601 in UTC, to the second. A naive time is a bug (whose zone?)."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("a correction's time must carry its time zone")
    return at.astimezone(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Correction:
    repo: str
    sha: str  # full, 40 lowercase hex digits
    level: str  # high, medium or low
    who: str
    reason: str
    at: datetime  # aware, UTC, whole seconds

    def as_dict(self) -> dict[str, str]:
        """The JSONL shape of `feedback export` (and of `eval --labels`: repo, sha, level, reason)."""
        return {
            "repo": self.repo,
            "sha": self.sha,
            "level": self.level,
            "reason": self.reason,
            "who": self.who,
            "at": stamp(self.at),
        }

    def _stored(self) -> dict[str, str]:
        return {"sha": self.sha, "level": self.level, "who": self.who, "reason": self.reason, "at": stamp(self.at)}

    @classmethod
    def _from_stored(cls, repo: str, value: dict[str, Any]) -> Correction:
        return cls(
            repo=repo,
            sha=value["sha"],
            level=value["level"],
            who=value["who"],
            reason=value.get("reason") or "",
            at=datetime.fromisoformat(value["at"]),
        )


def _latest(corrections: Iterable[Correction]) -> Correction | None:
    """The latest by time; between corrections of the same second, the one of the person whose
    name sorts last (any fixed rule: two taps in one second are both "the latest")."""
    return max(corrections, key=lambda c: (c.at, c.who), default=None)


class Corrections:
    """Level corrections over the bot's Store (see the module docstring for the key layout)."""

    def __init__(self, store: Store):
        self.store = store

    def _key(self, repo: str, scope: str) -> str:
        if scope:
            return self.store.k("corrections", "ws", scope, "repo", repo)
        return self.store.k("corrections", "repo", repo)

    def _index(self, scope: str) -> str:
        return self.store.k("corrections", "ws", scope, "repos") if scope else self.store.k("corrections", "repos")

    async def record(
        self,
        repo: str,
        sha: str,
        level: str,
        who: str,
        reason: str = "",
        at: datetime | None = None,
        scope: str = SHARED,
    ) -> Correction:
        """Keep `who`'s correction of commit `sha` in `repo` (at `at`, default now) in `scope`,
        replacing theirs of the same commit there unless theirs is newer. Returns the one of
        theirs now in force: this one, or the newer one already kept."""
        sha = sha.strip().lower()
        if not _FULL_SHA.fullmatch(sha):
            raise ValueError(f"not a full SHA: {sha!r} (resolve it through the source first)")
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        if not repo.strip() or not who.strip():
            raise ValueError("a correction needs a repository and a person")
        when = datetime.fromisoformat(stamp(at or datetime.now(UTC)))
        correction = Correction(repo.strip(), sha, level, who.strip(), reason.strip(), when)
        # The index first: a crash between the two leaves a repository without corrections in
        # it (harmless), never a correction that `export` cannot find.
        await self.store.sadd(self._index(scope), correction.repo)
        kept = await self.store.hset_json_unless_newer(
            self._key(correction.repo, scope), f"{sha}:{correction.who}", correction._stored(), "at"
        )
        return correction if kept is None else Correction._from_stored(correction.repo, kept)

    async def all_of(self, repo: str, scope: str = SHARED) -> list[Correction]:
        """Every person's correction of every commit of `repo` kept in `scope` alone, in no
        particular order."""
        values = (await self.store.hgetall_json(self._key(repo, scope))).values()
        return [Correction._from_stored(repo, value) for value in values]

    async def for_commit(self, repo: str, sha: str, scope: str = SHARED) -> Correction | None:
        """The effective correction of one commit (full SHA) as `scope` sees it (`effective`)."""
        return (await self.effective(repo, scope)).get(sha.strip().lower())

    async def effective(self, repo: str, scope: str = SHARED) -> dict[str, Correction]:
        """SHA → the effective correction (the latest across people), for every corrected commit
        of `repo` as a conversation of `scope` sees it: the shared scope's, with `scope`'s own
        laid over them (its own wins for the same commit). Never another workspace's."""
        out = _effective(await self.all_of(repo))
        if scope:
            out.update(_effective(await self.all_of(repo, scope)))
        return out

    async def repos(self, scope: str = SHARED) -> list[str]:
        """The repositories that hold corrections in `scope`, sorted."""
        return sorted(await self.store.smembers(self._index(scope)))

    async def export(self, repos: Iterable[str] | None = None) -> AsyncIterator[Correction]:
        """The effective correction of every corrected commit of `repos` (default: all) in the
        shared scope, by repository, then oldest first."""
        for repo in sorted(set(repos)) if repos is not None else await self.repos():
            for correction in sorted((await self.effective(repo)).values(), key=lambda c: (c.at, c.sha)):
                yield correction


def _effective(corrections: Iterable[Correction]) -> dict[str, Correction]:
    """SHA → the latest of its corrections."""
    by_sha: dict[str, list[Correction]] = {}
    for correction in corrections:
        by_sha.setdefault(correction.sha, []).append(correction)
    return {sha: latest for sha, group in by_sha.items() if (latest := _latest(group)) is not None}
