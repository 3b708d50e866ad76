"""What the conversation layer says, and the small interface a chat platform implements.

The core decides WHAT to send (these content types); each adapter in handlers/ renders them
natively (Block Kit, Feishu cards, terminal text) and sends them. Capabilities, not type checks:
the core asks `supports_files`, never `isinstance`, and never probes for a method. Every platform streams answers (`stream`), and
each adapter's renderer decides how a choice looks (buttons, or text on the terminal).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..i18n import Count, text
from .models import Commit, Digest, DigestEntry, Importance

# --- what the core sends -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BotGroup:
    """One bot's collapsed commits in a digest, newest first."""

    author: str
    entries: tuple[DigestEntry, ...]

    @property
    def updates(self) -> list[str]:
        """Each update once: the medium ones (a major bump) first, then oldest commit first (the
        day's updates in order); a commit whose versions were not found is named by its title."""
        seen: dict[str, None] = {}
        for e in sorted(self.entries, key=lambda e: (e.importance.rank, e.commit.committed_at)):
            for line in e.updates or (e.commit.title,):
                seen.setdefault(line, None)
        return list(seen)

    @property
    def mediums(self) -> int:
        return sum(1 for e in self.entries if e.importance is Importance.MEDIUM)


@dataclass(frozen=True)
class OwnerPing:
    """One code owner told in a digest's parent message: how many of its high and medium commits
    touch the owner's paths, and who the owner is in this conversation (`kind` and `id` of its
    mapping, bot/channels/owner_mentions.py; kind "" : not mapped, the name is shown and pings nobody)."""

    owner: str
    high: int
    medium: int
    kind: str = ""  # slack_user | slack_group | feishu_user | name | ""
    id: str = ""


@dataclass(frozen=True)
class DigestParent:
    """Title, stats, headline and the high items; its thread carries the details."""

    digest: Digest
    min_importance: str = "low"
    report_url: str | None = None  # the signed link to the full report page (PUBLIC_BASE_URL set)
    owners: tuple[OwnerPing, ...] = ()  # once per owner of its high and medium commits
    more_owners: int = 0  # owners left out of `owners` (one line counts them)


@dataclass(frozen=True)
class CommitDetail:
    """One high/medium commit's full analysis, with Ask / Details buttons."""

    digest: Digest
    entry: DigestEntry


@dataclass(frozen=True)
class LowCommits:
    """The low-importance commits of a digest, grouped compactly."""

    digest: Digest
    entries: tuple[DigestEntry, ...]
    total: int = 0  # the low commits this group stands for (0: every low commit of the digest)
    more: int = 0  # of those, how many are not listed: one closing line says so, and where they are
    more_how: str = ""  # where: "link" (report_url), "attached" (the Markdown file), "file_on", "page"
    report_url: str | None = None


@dataclass(frozen=True)
class BotUpdates:
    """Dependency bots' routine commits, one line per bot (bot/digest/noise.py), each commit reachable."""

    digest: Digest
    groups: tuple[BotGroup, ...]


# A roll-up's area names that are not directories (bot/digest/rollup.py groups by area; the
# renderers name these two in the digest's language).
ROOT_AREA = "/"  # the repository root
UNKNOWN_AREA = ""  # the commit's files could not be read


@dataclass(frozen=True)
class WeekRollup:
    """A week in one message: high and medium commits by area, each with its day; the bots' lines;
    one line counting the low commits, with the report link (bot/digest/rollup.py)."""

    digest: Digest
    areas: tuple[tuple[str, tuple[DigestEntry, ...]], ...]
    bots: tuple[BotGroup, ...] = ()
    low: int = 0
    more_how: str = ""  # as LowCommits.more_how
    report_url: str | None = None


@dataclass(frozen=True)
class UpgradeGroup:
    key: str  # a section of ORDER, or "fork_touches" / "fork_conflicts"
    heading: str  # in the digest's language, unescaped
    entries: tuple[DigestEntry, ...]


@dataclass(frozen=True)
class UpgradeReport:
    """A range's digest as an upgrade report (bot/render/upgrade.py makes it): the groups in order
    (must-handle sections, features and fixes by area, other, the fork's), the low commits counted,
    and the fork's line when it was read against one but none of its commits touches the fork."""

    digest: Digest
    groups: tuple[UpgradeGroup, ...]
    low: int = 0
    fork_clear: str = ""
    report_url: str | None = None  # the signed link to the full report page (PUBLIC_BASE_URL set)
    owners: tuple[OwnerPing, ...] = ()  # once per owner of its high and medium commits, as a digest's
    more_owners: int = 0

    @property
    def title(self) -> str:
        d = self.digest
        return text(d.lang, "upgrade.title", repo=d.repo, label=d.window.label)

    @property
    def stats(self) -> str:
        d = self.digest
        return text(
            d.lang,
            "upgrade.stats",
            label=d.window.label,
            commits=Count(len(d.entries), "counts.commit").say(d.lang),
            high=d.count(Importance.HIGH),
            medium=d.count(Importance.MEDIUM),
            low=d.count(Importance.LOW),
        )

    @property
    def low_line(self) -> str:
        if not self.low:
            return ""
        return text(self.digest.lang, f"upgrade.low.{'one' if self.low == 1 else 'other'}", n=self.low)

    @property
    def nothing(self) -> str:
        listed = any(not g.key.startswith("fork") for g in self.groups)
        return "" if listed else text(self.digest.lang, "upgrade.nothing")


@dataclass(frozen=True)
class CommitDetails:
    """Everything about one commit (the Details button): insights, risks, recommendations."""

    digest: Digest
    entry: DigestEntry


@dataclass(frozen=True)
class Notice:
    """A short line: progress, confirmation, usage, or an error."""

    text: str
    kind: str = "info"  # info | progress | error | usage
    lang: str = ""  # "" → renderers guess from the text


@dataclass(frozen=True)
class CommitChoice:
    """The question matched several commits: ask which one, with a button each."""

    question: str
    commits: tuple[Commit, ...]
    repo_of: tuple[str, ...] = ()  # repo id per commit, for the buttons' payloads
    lang: str = "en"


@dataclass(frozen=True)
class AnswerHeader:
    """Posted before a streamed answer when the question came from a button or a command."""

    user: str
    question: str
    commit: Commit | None  # None: a question about a period, not one commit
    lang: str = ""


Content = (
    DigestParent
    | CommitDetail
    | LowCommits
    | CommitDetails
    | Notice
    | CommitChoice
    | AnswerHeader
    | BotUpdates
    | WeekRollup
    | UpgradeReport
)


@dataclass(frozen=True)
class MessageRef:
    """Where a message landed: enough to update it or reply in its thread."""

    channel: str
    id: str  # Slack ts / Feishu message_id / console number
    thread: str | None = None  # the thread it belongs to (None: it is top level)
    # Every message the content was split into, first included, in order ((): just `id`); a
    # level tap redraws them all (bot/levels/).
    parts: tuple[str, ...] = field(default=(), compare=False)

    @property
    def thread_root(self) -> str:
        return self.thread or self.id


@dataclass(frozen=True)
class Conversation:
    """Where a request came from and where its answers go."""

    platform: str
    channel: str
    user: str
    thread: str | None = None  # the thread the request was made in, if any
    is_dm: bool = False
    extra: dict = field(default_factory=dict, compare=False)  # adapter data (response_url, recipient team…)


class ChatPlatform(Protocol):
    """Everything the core calls on a platform, and nothing it probes for: an adapter implements
    every member (a capability it lacks is a value, such as `send_dedupe_window = None`, or a
    method that answers "nothing to do"). tests/test_platforms.py holds each adapter to this."""

    name: str
    supports_files: bool
    # Seconds the platform deduplicates a keyed send (Feishu's `uuid`: one hour); None when it
    # does not, and then a keyed re-send is the platform's own business (Slack: a Redis marker
    # plus message metadata) and `send_unless_posted` is never asked.
    send_dedupe_window: float | None

    async def send(
        self, channel: str, content: Content, *, thread: str | None = None, key: str | None = None
    ) -> MessageRef:
        """Post `content` (split across messages if it exceeds the platform's limits); the
        returned ref is the first message. `key` is a stable idempotency key for this logical
        message (platforms that dedupe sends, like Feishu's `uuid`, derive theirs from it)."""

    async def send_unless_posted(
        self, channel: str, content: Content, *, thread: str | None = None, key: str, since: float
    ) -> MessageRef | None:
        """A keyed send tried at `since` (epoch seconds) with an unknown outcome, after the
        platform stopped deduplicating its key: read the conversation back and post only what is
        not there. None when the platform cannot tell (the caller then never re-sends)."""

    async def update(self, ref: MessageRef, content: Content) -> MessageRef:
        """Replace a message (the progress line becomes the digest)."""

    async def revise(self, ref: MessageRef, content: Content) -> bool:
        """Redraw a posted content in place (a level correction): each of its messages
        (`ref.parts`) gets the re-rendered one. False, and nothing changed, when the content no
        longer renders to that many messages (or the platform no longer lets them be edited)."""

    async def reply_private(self, conv: Conversation, content: Content) -> None:
        """Only the asking user sees it (Slack ephemeral; elsewhere a normal reply)."""

    async def stream(
        self, channel: str, thread: str, pieces: AsyncIterator[str], *, conv: Conversation | None = None, lang: str = ""
    ) -> MessageRef:
        """Post an answer into a thread as its pieces arrive (`lang` for the platform's own
        words around it, such as a "thinking…" placeholder)."""

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        """Attach a text file (the Markdown report); only called when `supports_files`."""

    async def direct_channel(self, conv: Conversation) -> str | None:
        """The one-to-one conversation between the bot and the person who made this request, when
        the request came from one (a watch's messages go there); None from a group or channel."""

    async def reaches(self, channel: str) -> bool:
        """Whether `channel` (a conversation or a person's address) can be sent to now: False for a
        workspace that removed the app (its subscriptions, watches and alerts wait, kept, until it
        is installed again); True wherever the platform serves one workspace."""

    async def config_caveat(self, channel: str, questions: str, lang: str) -> str | None:
        """A sentence to add to the `config` reply when the channel's setting (`questions`, as just
        set) cannot work on this platform (Feishu: `questions all` without the scope to read group
        messages); else None."""


def chunk_text(text: str, limit: int) -> list[str]:
    """Split text into pieces ≤ limit characters, at paragraph, then line, then word boundaries —
    never dropping a character (platforms reject or silently cut oversized messages)."""
    if limit <= 0:
        raise ValueError("limit must be positive")
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), -1)
        if cut < limit // 3:
            cut = window.rfind("\n")
        if cut < limit // 3:
            cut = window.rfind(" ")
        if cut < limit // 3:
            cut = limit  # one enormous word: cut it hard rather than exceed the limit
        pieces.append(rest[:cut])
        rest = rest[cut:]
        rest = rest[1:] if rest[:1] in ("\n", " ") and cut != limit else rest
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def entries_at_least(entries: Sequence[DigestEntry], minimum: str) -> list[DigestEntry]:
    rank = {"high": 0, "medium": 1, "low": 2}[minimum]
    return [e for e in entries if e.importance.rank <= rank]


class Platforms(dict[str, ChatPlatform]):
    """The platforms this process serves, by name: filled in as adapters register, shared by
    everything that posts (deliveries, watches, the improve pass, the clock's "is it mine")."""

    def register(self, platform: ChatPlatform) -> None:
        self[platform.name] = platform
