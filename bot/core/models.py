"""The core's vocabulary: commits, analyses, digests, subscriptions.

Plain frozen dataclasses so every layer (sources, analysis, rendering, chat) shares one shape,
plus `to_dict` / `from_dict` for the Redis caches and the JSON output.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..i18n import text
from .links import GITHUB_LINKS, LinkStyle, link_style_from_dict


class BotError(Exception):
    """A failure the user should read as one sentence (no traceback)."""

    exit_code = 1


class RetryLater(BotError):
    """A job that should run again after `delay` seconds (the job queue defers it)."""

    def __init__(self, reason: str, delay: float):
        super().__init__(reason)
        self.delay = delay


class UsageError(BotError):
    """The user asked for something malformed (bad date, bad flag, unknown command)."""

    exit_code = 2


class NotFoundError(BotError):
    """The named repository, branch or commit does not exist (or is not visible)."""

    exit_code = 2  # naming something that is not there is bad input, not a failure of ours


class SourceError(BotError):
    """The commit source failed after retries (GitHub down, rate limit not reset in time, git error)."""


class Unreachable(SourceError):
    """The source's host could not be reached at all (refused, timed out, no such host), after
    retries: the next request to it would fail the same way."""


class RateLimited(SourceError):
    """GitHub's rate limit is exhausted until `until` (epoch seconds), too far away to wait."""

    def __init__(self, message: str, until: float | None = None):
        super().__init__(message)
        self.until = until


class Importance(str, enum.Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        return {"high": 0, "medium": 1, "low": 2}[self.value]

    @property
    def emoji(self) -> str:
        return {"high": "🔴", "medium": "🟡", "low": "🟢"}[self.value]


class ChangeType(str, enum.Enum):
    """One closed list shared by every importance tier (the reference tool had per-tier lists)."""

    FEATURE = "feature"
    BUGFIX = "bugfix"
    PERFORMANCE = "performance"
    REFACTOR = "refactor"
    DOCS = "docs"
    TESTS = "tests"
    CI_BUILD = "ci/build"
    DEPENDENCIES = "dependencies"
    CONFIG = "config"
    REVERT = "revert"
    REMOVAL = "removal/deprecation"
    SECURITY = "security"
    OTHER = "other"

    def label(self, lang: str) -> str:
        return text(lang, f"cards.change_type.{self.value}")


BOT_MODES = ("collapse", "show")  # how a digest shows dependency bots' commits (bot/digest/noise.py)
ALERT_LEVELS = ("high", "off")  # a subscription's alerts (bot/alerts/): none, or each new high commit


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # added | modified | removed | renamed | copied
    additions: int = 0
    deletions: int = 0
    patch: str | None = None  # None: the source gave no patch (binary, or too large)
    previous_path: str | None = None
    binary: bool = False

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


@dataclass(frozen=True)
class Commit:
    """One commit's metadata, as listed for a window (no file contents)."""

    repo: str  # display name: owner/name, or the local directory's name
    sha: str
    title: str
    body: str  # the message after the title, trailers and e-mail addresses removed
    author: str  # a display name, never an e-mail address
    committed_at: datetime  # aware, UTC
    url: str | None = None
    parents: tuple[str, ...] = ()
    pr_number: int | None = None
    reverts: str | None = None  # SHA named by "This reverts commit …"
    additions: int | None = None  # totals, when the listing already knows them
    deletions: int | None = None
    files_changed: int | None = None
    # The author's GitHub login, else the user part of their e-mail address (never the address):
    # what `authors NAME` matches besides the name (bot/digest/authorfilter.py). "" when unknown.
    login: str = ""

    @property
    def short_sha(self) -> str:
        return self.sha[:7]

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    def local_time(self, tz: str) -> datetime:
        return self.committed_at.astimezone(ZoneInfo(tz))


# A past commit's paths, at most: what GitHub lists of a pull request's files in one GraphQL page
# (a local clone lists as many, so that both sources teach the learned profile the same).
HISTORY_PATHS = 100


@dataclass(frozen=True)
class PastCommit:
    """A commit as the learned profile reads history: its title, what it touched, and the files
    it added (changelog fragments among them). No patches: 2,000 of these are read at once. A
    rename counts as its new path (not added); at most HISTORY_PATHS paths, in path order."""

    sha: str
    committed_at: datetime  # aware, UTC
    title: str
    pr_number: int | None
    paths: tuple[str, ...]
    added: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """What a repository's learned profile (bot/taste) says of one commit."""

    above_low: float  # probability that the maintainers announce it (medium or high)
    high: float  # probability that it is listed as breaking or security
    heading: str  # the maintainers' heading it would most likely be listed under ("" when unsure)
    heading_share: float  # that heading's probability among the announced changes
    # The most similar commits of the project's history, as (level, heading or "", title): the
    # LLM prompt's examples of this project's taste.
    similar: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Insights:
    architecture: str = ""
    performance: str = ""
    security: str = ""


@dataclass(frozen=True)
class Coverage:
    """How much of the commit's diff the analysis saw — shown under every analysed commit."""

    files_total: int
    files_shown: int
    partial: tuple[str, ...] = ()  # shown, but clipped
    omitted: tuple[tuple[str, str], ...] = ()  # (path, reason)

    @property
    def complete(self) -> bool:
        return not self.partial and not self.omitted


@dataclass(frozen=True)
class Analysis:
    change_type: ChangeType
    importance: Importance
    importance_reason: str
    summary: str
    impact: str = ""
    insights: Insights = field(default_factory=Insights)
    risks: tuple[str, ...] = ()
    recommendations: tuple[str, ...] = ()
    # Provenance, shown to the reader: "llm", or "offline" (no LLM configured), or
    # "fallback" (the LLM failed for this commit; `note` says why).
    origin: str = "llm"
    model: str = ""
    note: str = ""
    # For fallbacks, why, as a code the digest's notice and the CLI summary group by: timeout,
    # unreachable, http_error, context (LLM failures), rejected (answers failed the checks),
    # rate_limited / source (the diff could not be read).
    fallback_reason: str = ""
    coverage: Coverage | None = None
    files_changed: int = 0
    additions: int = 0
    deletions: int = 0
    # A published digest's fallback that a later retry replaced (bot/improve/): when (ISO 8601, in
    # the digest's time zone, so the note reads the reader's clock) and what it had been (a
    # `fallback_reason`). Empty for an analysis made at the first attempt.
    improved_at: str = ""
    improved_from: str = ""


@dataclass(frozen=True)
class Downstream:
    """What one upstream commit means for a fork (`--fork`, a subscription's `fork`): the files it
    touches that the fork patches, the fork's hunks in them, and whether cherry-picking the commit
    onto the fork's branch conflicts."""

    patched_files: tuple[str, ...]
    conflict: bool
    hunks: int


@dataclass(frozen=True)
class ForkInfo:
    """The fork a digest was read against: shown once above the Downstream section."""

    name: str  # org/our-fork or the local folder's name
    branch: str
    merge_base: str  # the fork's merge base with the upstream branch
    files: int  # files the fork patches since that merge base


@dataclass(frozen=True)
class DigestEntry:
    commit: Commit
    analysis: Analysis | None  # None only when even the offline analysis failed
    error: str = ""  # why there is no analysis
    # A dependency bot's commit: what it updates ("clap 4.5.53 → 4.5.54"), for the collapsed bot
    # line (bot/digest/noise.py); empty for everyone else.
    updates: tuple[str, ...] = ()
    downstream: Downstream | None = None  # None: no fork named, or the commit touches nothing it patches
    # A reader's level correction in force (bot/levels/overlay.py): the analysis then carries the
    # corrected level, and these say who set it and what the analysis had said.
    corrected_by: str = ""
    corrected_from: Importance | None = None
    # …and the reason the analysis had given: the analysis then carries a reason that fits the
    # corrected level ("corrected to low by a reader; the bot had said: …"). None: not kept (an
    # entry drawn before reasons were rewritten: its analysis still has its own reason).
    corrected_reason: str | None = None
    # Its code owners: of every path it touches, from CODEOWNERS as of the digest's newest commit
    # (bot/digest/entry_owners.py); empty without a CODEOWNERS file or an owner.
    owners: tuple[str, ...] = ()
    # Posted on its own as an alert before this digest (bot/alerts/): set per conversation on a
    # copy at delivery, never in the cached digest.
    alerted: bool = False
    # A digest of several branches (bot/sources/branches.py): every followed branch the commit is
    # on; the SHA it is a backport (cherry-pick) of, when its original is not listed; the SHAs of
    # its backports folded into this entry. Empty for a digest of one branch.
    branches: tuple[str, ...] = ()
    backport_of: str = ""
    backports: tuple[str, ...] = ()

    @property
    def importance(self) -> Importance:
        return self.analysis.importance if self.analysis else Importance.MEDIUM


@dataclass(frozen=True)
class Window:
    """A half-open interval [start, end) of local days in `tz`."""

    start: datetime  # aware, in tz
    end: datetime
    tz: str
    label: str  # "2026-01-28" or "2026-01-20..2026-01-22"; a ref range: as typed, "0.11.8..0.11.9"
    # A ref range (`digest A..B`, `release TAG`): the full SHAs of its ends, resolved once. Its
    # commits are the first-parent ones of base..head, whatever their dates; start/end only span
    # them (for display). "" for a window of days.
    base: str = ""
    head: str = ""

    @property
    def is_range(self) -> bool:
        return bool(self.head)

    @property
    def start_utc(self) -> datetime:
        return self.start.astimezone(UTC)

    @property
    def end_utc(self) -> datetime:
        return self.end.astimezone(UTC)

    def contains(self, instant: datetime) -> bool:
        return self.start <= instant < self.end


@dataclass(frozen=True)
class Cost:
    """What building a digest cost in LLM tokens, as the endpoint reported them (bot/analysis/cost.py)."""

    tokens_in: int = 0  # prompt tokens
    tokens_out: int = 0  # completion tokens
    calls: int = 0  # LLM requests answered (analyses, retries, the headline)
    analyses: int = 0  # commits analysed through the analysis cache
    cached: int = 0  # of them, analysed before (the cache, or another digest at the same moment): 0 tokens
    money: float | None = None  # from LLM_PRICE_PER_MTOK_IN/OUT; None when no price is set
    earlier_tokens: int | None = None  # the whole digest came from the cache: what building it cost then
    timeouts: int = 0  # LLM requests that timed out (each sent once more): the time it took, said
    timeout_seconds: float = 0.0  # LLM_TIMEOUT then

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


@dataclass(frozen=True)
class Digest:
    repo: str
    branch: str
    window: Window
    lang: str
    entries: tuple[DigestEntry, ...]  # newest first
    headline: tuple[str, ...] = ()
    # "llm", "offline" (no LLM configured), "fallback" (the LLM failed) or "corrected" (the model's
    # bullets put aside for rule-based ones while readers' corrections show: uncorrected_headline)
    headline_origin: str = "offline"
    repo_url: str | None = None
    generated_at: datetime | None = None
    repo_spec: str = ""  # how commands name the repository (owner/name or the configured path)
    # How the repository's host links (bot/core/links.py): GitHub's `/pull/N`, GitLab's `/-/merge_requests/N` …
    links: LinkStyle = GITHUB_LINKS
    # Sentences in the digest's language that every surface shows first: what went wrong while
    # building it (the LLM could not analyse some commits, GitHub's rate limit …). Recounted when a
    # retry improves the kept digest (bot/improve/).
    notices: tuple[str, ...] = ()
    headline_fallback: str = ""  # why the LLM's headline failed (timeout … rejected), for the CLI
    # The path filter it was built with (bot/digest/pathfilter.py), said in its header, and how many of
    # the window's commits the filter left out.
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    filtered_out: int = 0
    # The author filter it was built with (bot/digest/authorfilter.py), said in its header too;
    # filtered_out counts what either filter left out.
    authors: tuple[str, ...] = ()
    exclude_authors: tuple[str, ...] = ()
    fork: ForkInfo | None = None  # set when the digest was read against a fork (bot.fork)
    cost: Cost | None = None  # LLM tokens it cost (None: built without an LLM)
    # A finished window's digest is kept as first published (bot/improve/): the store key it is
    # kept under ("" for a window still open) and how many times a retry has improved it since.
    kept_as: str = ""
    revision: int = 0
    # A model's headline, put aside while readers' corrections show (bot/levels/overlay.py): the
    # headline is then drawn by rule from the corrected levels (origin "corrected"); () otherwise.
    uncorrected_headline: tuple[str, ...] = ()

    @property
    def repo_id(self) -> str:
        """What buttons and threads carry to reopen this repository's source."""
        return self.repo_spec or self.repo

    def change_url(self, number: int | None) -> str | None:
        """The page of pull (merge) request `number`, as the repository's host links it."""
        return self.links.change_url(self.repo_url, number)

    def commit_url(self, sha: str) -> str | None:
        return self.links.commit_url(self.repo_url, sha)

    def count(self, importance: Importance) -> int:
        return sum(1 for e in self.entries if e.importance is importance)

    def grouped(self) -> list[tuple[Importance, list[DigestEntry]]]:
        return [(imp, [e for e in self.entries if e.importance is imp]) for imp in Importance]


@dataclass(frozen=True)
class Subscription:
    platform: str  # slack | feishu | console
    channel: str
    repo: str
    at: str = "09:00"  # HH:MM local
    tz: str = "Asia/Shanghai"
    lang: str = "zh"
    min_importance: Importance = Importance.LOW
    branch: str | None = None
    post_empty: bool = True
    paths: tuple[str, ...] = ()  # only commits touching these globs (bot/digest/pathfilter.py)
    exclude: tuple[str, ...] = ()  # … and not only these
    authors: tuple[str, ...] = ()  # only these authors' commits (bot/digest/authorfilter.py)
    exclude_authors: tuple[str, ...] = ()  # … and not these authors'
    bots: str = "collapse"  # collapse | show: dependency bots' commits as one line per bot
    weekday: str | None = None  # None: a daily push; "mon" … "sun": the weekly roll-up on that day
    fork: str | None = None  # org/our-fork@branch: each digest says what it means for that fork
    owner: str = ""  # who named the fork: told directly when a conflicting commit lands
    alerts: str = "off"  # off | high: each new high commit posted on its own (bot/alerts/)

    @property
    def weekly(self) -> bool:
        return self.weekday is not None

    @property
    def key(self) -> str:
        # A channel may have a daily push and a weekly roll-up of the same repository.
        return f"{self.platform}:{self.channel}:{self.repo.lower()}" + (":weekly" if self.weekly else "")


# --- (de)serialisation -----------------------------------------------------------------------


def to_dict(obj: Any) -> Any:
    """A JSON-ready dict of any model above (enums → values, datetimes → ISO 8601)."""
    if type(obj) in _PLAIN:  # (exactly: a str enum is an enum)
        return obj
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, datetime):
        return obj.isoformat()
    if type(obj) is FileChange:  # a day's files are thousands: field by field, not the walk
        return file_to_dict(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return {name: to_dict(getattr(obj, name)) for name in _field_names(type(obj))}
    if isinstance(obj, (list, tuple)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def commit_from_dict(d: dict) -> Commit:
    return Commit(
        **{**d, "committed_at": datetime.fromisoformat(d["committed_at"]), "parents": tuple(d.get("parents") or ())}
    )


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (`fields()` builds them anew at every call: a kept
    digest is thousands of objects)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def file_to_dict(f: FileChange) -> dict[str, Any]:
    """`to_dict(f)`, field by field without the generic walk: a day's files are thousands of
    them, each stored once (tests/test_speed_work.py holds the two equal)."""
    return {
        "path": f.path,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "patch": f.patch,
        "previous_path": f.previous_path,
        "binary": f.binary,
    }


def file_from_dict(d: dict) -> FileChange:
    return FileChange(**d)


def analysis_from_dict(d: dict) -> Analysis:
    cov = d.get("coverage")
    coverage = None
    if cov:
        coverage = Coverage(
            files_total=cov["files_total"],
            files_shown=cov["files_shown"],
            partial=tuple(cov.get("partial") or ()),
            omitted=tuple(tuple(x) for x in cov.get("omitted") or ()),
        )
    return Analysis(
        **{
            **d,
            "change_type": ChangeType(d["change_type"]),
            "importance": Importance(d["importance"]),
            "insights": Insights(**(d.get("insights") or {})),
            "risks": tuple(d.get("risks") or ()),
            "recommendations": tuple(d.get("recommendations") or ()),
            "coverage": coverage,
        },
    )


def window_from_dict(d: dict) -> Window:
    return Window(
        start=datetime.fromisoformat(d["start"]),
        end=datetime.fromisoformat(d["end"]),
        tz=d["tz"],
        label=d["label"],
        base=d.get("base") or "",
        head=d.get("head") or "",
    )


def downstream_from_dict(d: dict | None) -> Downstream | None:
    if not d:
        return None
    return Downstream(
        patched_files=tuple(d.get("patched_files") or ()),
        conflict=bool(d.get("conflict")),
        hunks=int(d.get("hunks") or 0),
    )


def entry_from_dict(e: dict) -> DigestEntry:
    return DigestEntry(
        commit=commit_from_dict(e["commit"]),
        analysis=analysis_from_dict(e["analysis"]) if e.get("analysis") else None,
        error=e.get("error", ""),
        updates=tuple(e.get("updates") or ()),
        downstream=downstream_from_dict(e.get("downstream")),
        corrected_by=e.get("corrected_by") or "",
        corrected_from=Importance(e["corrected_from"]) if e.get("corrected_from") else None,
        corrected_reason=e.get("corrected_reason"),
        owners=tuple(e.get("owners") or ()),
        alerted=bool(e.get("alerted")),
        branches=tuple(e.get("branches") or ()),
        backport_of=e.get("backport_of") or "",
        backports=tuple(e.get("backports") or ()),
    )


def digest_from_dict(d: dict) -> Digest:
    entries = tuple(entry_from_dict(e) for e in d["entries"])
    gen = d.get("generated_at")
    fork = ForkInfo(**d["fork"]) if d.get("fork") else None
    return Digest(
        repo=d["repo"],
        branch=d["branch"],
        window=window_from_dict(d["window"]),
        lang=d["lang"],
        entries=entries,
        headline=tuple(d.get("headline") or ()),
        headline_origin=d.get("headline_origin", "offline"),
        repo_url=d.get("repo_url"),
        generated_at=datetime.fromisoformat(gen) if gen else None,
        repo_spec=d.get("repo_spec", ""),
        links=link_style_from_dict(d.get("links")),
        notices=tuple(d.get("notices") or ()),
        headline_fallback=d.get("headline_fallback", ""),
        paths=tuple(d.get("paths") or ()),
        exclude=tuple(d.get("exclude") or ()),
        filtered_out=d.get("filtered_out", 0),
        authors=tuple(d.get("authors") or ()),
        exclude_authors=tuple(d.get("exclude_authors") or ()),
        fork=fork,
        cost=Cost(**d["cost"]) if d.get("cost") else None,
        kept_as=d.get("kept_as") or "",
        revision=int(d.get("revision") or 0),
        uncorrected_headline=tuple(d.get("uncorrected_headline") or ()),
    )


def subscription_from_dict(d: dict) -> Subscription:
    return Subscription(
        **{
            **d,
            "min_importance": Importance(d.get("min_importance", "low")),
            "paths": tuple(d.get("paths") or ()),
            "exclude": tuple(d.get("exclude") or ()),
            "authors": tuple(d.get("authors") or ()),
            "exclude_authors": tuple(d.get("exclude_authors") or ()),
        }
    )


__all__ = [name for name in dir() if not name.startswith("_")] + ["asdict", "replace"]
