"""`python -m bot feedback import FILE.jsonl` and `python -m bot feedback export`: the operator's
side of readers' level corrections (argparse is in bot/__main__.py).

The file is JSONL, one correction a line: `{"repo": …, "sha": …, "level": "high|medium|low",
"reason": …, "who": …, "at": …}` — `reason`, `who` (default "import") and `at` (ISO 8601 with a
time zone; default: the time of the import) optional. That is the shape of the `eval --labels`
file (bot/evaluation/card.py), so each file serves as the other: `export` writes the effective correction
of every corrected commit, which `eval --labels` reads as a maintainer's labels (for a repository
named owner/name) and `import` reads back unchanged.

Each line's commit is resolved in its repository through the bot's own sources: `repo` is
owner/name (GitHub) or a local git path, or is read from the clone `--repo OWNER/NAME=PATH` names,
as `eval` does. A correction is stored under the repository's display name: the OWNER/NAME of
`--repo`, else the source's own name (GitHub's spelling, or a local clone's origin or folder name).
A line that cannot be imported gets one sentence on stderr naming it, and nothing of it is kept;
the other lines are imported; exit 2 when any line was refused. A repository whose host cannot be
reached at all stops the import at its first line, in one sentence (exit 1): every line after it
would wait out the same retries. The command's own lines are in
`--lang`, else DEFAULT_LANG, like every CLI command's.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from settings import Settings

from ..core.models import BotError, NotFoundError, SourceError, Unreachable, UsageError
from ..i18n import Count, localize, phrase
from ..taste.corrections import Corrections
from ..taste.scores import LEVELS
from .terminal import _check_out_path, stderr_lang, write_out

DEFAULT_WHO = "import"


@dataclass(frozen=True)
class Line:
    """One well-formed line of the file, its commit not yet resolved."""

    number: int
    repo: str
    sha: str
    level: str
    who: str
    reason: str
    at: datetime | None


class Refused(Exception):
    """A line that is not imported; its argument is the sentence (a Phrase) that says why."""


async def feedback_command(args, settings: Settings) -> int:
    if args.action == "import":
        return await import_command(args, settings)
    return await export_command(args, settings)


def _why(exc: BaseException) -> object:
    """An error's sentence, still to be said in the reader's language (a Phrase tells itself)."""
    return exc.args[0] if len(exc.args) == 1 else str(exc)


def _say(lang: str, key: str, **fields: Any) -> None:
    print(phrase(key, **fields).say(lang), file=sys.stderr)


# --- import ------------------------------------------------------------------------------------------


def read_file(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError(phrase("feedback.file_missing", path=path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise UsageError(phrase("feedback.file_unreadable", path=path, reason=reason)) from None


def parse_line(raw: str, number: int, path: Path) -> Line:
    """A well-formed line, or Refused saying what is wrong with it."""
    try:
        item = json.loads(raw)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        raise Refused(phrase("feedback.not_json", line=number, path=path))
    for field in ("repo", "sha", "level"):
        if not isinstance(item.get(field), str) or not item[field].strip():
            raise Refused(phrase("feedback.missing_field", line=number, path=path, field=field))
    level = item["level"].strip()
    if level not in LEVELS:
        raise Refused(phrase("feedback.bad_level", line=number, path=path, value=item["level"]))
    for field in ("who", "reason", "at"):
        if item.get(field) is not None and not isinstance(item[field], str):
            raise Refused(phrase("feedback.not_text", line=number, path=path, field=field))
    at = None
    if (given := (item.get("at") or "").strip()) != "":
        try:
            at = datetime.fromisoformat(given)
        except ValueError:
            at = None
        if at is None or at.utcoffset() is None:
            raise Refused(phrase("feedback.bad_at", line=number, path=path, value=given))
    return Line(
        number=number,
        repo=item["repo"].strip(),
        sha=item["sha"].strip(),
        level=level,
        who=(item.get("who") or "").strip() or DEFAULT_WHO,
        reason=(item.get("reason") or "").strip(),
        at=at,
    )


def _locations(lines: list[Line], repo_args: list[str]) -> dict[str, str]:
    """`--repo [OWNER/NAME=]PATH` as repo → where to read it, checked as `eval` checks it."""
    from ..evaluation.card import _repo_arg

    if not lines:
        return {}  # nothing to resolve: no --repo can be wrong about it
    named = Counter(line.repo for line in lines)
    return dict(_repo_arg(spec, named) for spec in repo_args)


class _Resolver:
    """Each line's commit in its repository, each repository opened once."""

    def __init__(self, settings: Settings, locations: dict[str, str], path: Path):
        self.settings = settings
        self.locations = locations
        self.path = path
        self.sources: dict[str, Any] = {}  # location → CommitSource, or the BotError opening it raised

    def _open(self, location: str):
        from ..sources.opened import open_source

        if location not in self.sources:
            try:
                self.sources[location] = open_source(location, self.settings)
            except BotError as exc:
                self.sources[location] = exc
        return self.sources[location]

    async def resolve(self, line: Line) -> tuple[str, str]:
        """(the repository's display name, the commit's full SHA), or Refused."""
        location = self.locations.get(line.repo, line.repo)
        source = self._open(location)
        if isinstance(source, BotError):
            raise Refused(
                phrase(
                    "feedback.repo_unopenable", line=line.number, path=self.path, repo=line.repo, reason=_why(source)
                )
            )
        try:
            commit = await source.get_commit(line.sha)
        except Unreachable:
            raise  # not this line's fault: every line after it would wait as long (import_command stops)
        except NotFoundError:
            raise Refused(
                phrase(
                    "feedback.no_commit",
                    line=line.number,
                    path=self.path,
                    sha=line.sha,
                    repo=line.repo,
                    location=location,
                )
            ) from None
        except BotError as exc:  # not a SHA, ambiguous, GitHub out of reach …
            raise Refused(
                phrase("feedback.commit_unreadable", line=line.number, path=self.path, sha=line.sha, reason=_why(exc))
            ) from None
        return (line.repo if line.repo in self.locations else source.name), commit.sha

    def close(self) -> None:
        for source in self.sources.values():
            if close := getattr(source, "close", None):
                close()


async def import_command(args, settings: Settings) -> int:
    from ..core.store import open_store

    say = stderr_lang(args, settings)
    path = Path(args.file)
    lines: list[Line] = []
    refused: list[tuple[int, str]] = []  # (line number, the sentence)
    for number, raw in enumerate(read_file(path), 1):
        if not raw.strip():
            continue
        try:
            lines.append(parse_line(raw, number, path))
        except Refused as exc:
            refused.append((number, localize(exc, say)))
    resolver = _Resolver(settings, _locations(lines, args.repo), path)
    imported = 0
    store = open_store(settings)
    try:
        corrections = Corrections(store)
        for done, line in enumerate(lines):
            try:
                repo, sha = await resolver.resolve(line)
            except Refused as exc:
                refused.append((line.number, localize(exc, say)))
                continue
            except Unreachable as exc:  # stop at the first: the next line would fail after as long
                for _, sentence in sorted(refused):
                    print(sentence, file=sys.stderr)
                raise SourceError(
                    phrase(
                        "feedback.unreachable",
                        line=line.number,
                        path=path,
                        reason=_why(exc),
                        imported=Count(imported, "counts.correction"),
                        left=Count(len(lines) - done - 1, "counts.line"),
                    )
                ) from None
            await corrections.record(repo, sha, line.level, line.who, line.reason, line.at)
            imported += 1
    finally:
        resolver.close()
        await store.close()
    for _, sentence in sorted(refused):
        print(sentence, file=sys.stderr)
    _say(
        say,
        "feedback.imported",
        path=path,
        imported=Count(imported, "counts.correction"),
        refused=Count(len(refused), "counts.line"),
    )
    return 2 if refused else 0


# --- export ------------------------------------------------------------------------------------------


async def export_command(args, settings: Settings) -> int:
    from ..core.store import open_store

    say = stderr_lang(args, settings)
    _check_out_path(args.out)
    store = open_store(settings)
    try:
        rows = [c async for c in Corrections(store).export(args.repo or None)]
    finally:
        await store.close()
    body = "".join(json.dumps(c.as_dict(), ensure_ascii=False) + "\n" for c in rows)
    if args.out:
        write_out(args.out, body)
    else:
        sys.stdout.write(body)
    found = {c.repo for c in rows}
    for repo in dict.fromkeys(args.repo):
        if repo not in found:
            _say(say, "feedback.none_for", repo=repo)
    if not args.repo and not rows:
        _say(say, "feedback.none_stored")
    count = Count(len(rows), "counts.correction")
    if args.out:
        _say(say, "feedback.wrote", path=args.out, corrections=count)
    else:
        _say(say, "feedback.exported", corrections=count)
    return 0
