"""Questions about a period in chat: `/digest ask what changed in the scheduler this week?`,
`@bot 上周 FP8 在 ROCm 上有什么改动？`, a DM with `in owner/repo`. The answer streams into a new
thread under the question, like a question about a commit; the thread remembers the period and
the repositories, so its follow-ups keep them (a follow-up that names another period moves the
thread to it; one that names a SHA among the answer's sources is a question about that commit).

Repositories: the one named with `in owner/repo` (or `在 owner/repo`), else the channel's
subscriptions, else the default repository. The period and time zone: the words of the question
in the channel's time zone (bot/period_questions/period.py), the last 7 days when it names none.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import datetime

from settings import Settings

from ..answers.question import Turn, check_question
from ..channels.subscriptions import Subscriptions
from ..channels.threads import ThreadCommit, ThreadInfo, Threads
from ..core.chat_platform import AnswerHeader, ChatPlatform, Conversation, Notice
from ..core.models import NotFoundError, UsageError, to_dict, window_from_dict
from ..i18n import localize, text
from ..period_questions.answer_trace import Trace
from ..period_questions.period import find_period
from .grammar import repo_word, usage_line
from .policy import ChannelPolicy
from .ports import PeriodAnswers, SourceRegistry

_SHA = re.compile(r"\b[0-9a-fA-F]{7,40}\b")
TURN = "period"  # the `sha` field of a period thread's turns (bot/channels/threads.py keeps turns by commit)
_IN_REPO = re.compile(
    r"(?:^|(?<=\s))(?:in|在)\s*(<?(?:https?://[^\s/]+/)?[A-Za-z0-9][A-Za-z0-9-]{0,38}/"
    r"[A-Za-z0-9._-]{1,100}?(?:\|[^>\s]+)?>?)(?=$|[\s?？,，。!！:：]|\.(?:\s|$))",
    re.IGNORECASE,
)
_QUESTION_WORDS = re.compile(
    r"[?？]|\b(?:what|which|how|why|did|does|any|anything|who|when)\b|"
    r"什么|哪些|哪个|怎么|如何|为什么|有没有|吗",
    re.IGNORECASE,
)


def split_repo(question: str) -> tuple[str | None, str]:
    """(`owner/repo` named with `in …`, the question without those words)."""
    m = _IN_REPO.search(question or "")
    if m is None:
        return None, question
    rest = (question[: m.start()] + " " + question[m.end() :]).strip()
    return repo_word(m.group(1), "ask"), " ".join(rest.split())


def is_period_question(text: str, tz: str, now, max_days: int) -> bool:
    """A mention or DM naming no commit is a question about a period when it reads like one: it
    names a period or asks (a question mark or word). "hello" and "thanks a lot" are not; they
    get the help."""
    try:
        period = find_period(text, tz, now, max_days)
    except UsageError:
        return True  # it named a period, badly: the answer says what is wrong with it
    return period.said or bool(_QUESTION_WORDS.search(text))


class PeriodQuestions:
    def __init__(
        self,
        settings: Settings,
        sources: SourceRegistry,
        period_qa: PeriodAnswers,
        threads: Threads,
        subs: Subscriptions,
        policy: ChannelPolicy,
        clock: Callable[[], datetime],
    ):
        self.settings = settings
        self.sources = sources
        self.period_qa = period_qa
        self.threads = threads
        self.subs = subs
        self.policy = policy
        self.clock = clock

    async def ask(
        self,
        conv: Conversation,
        platform: ChatPlatform,
        question: str,
        cfg,
        prefix: str = "/digest",
        usage: bool = True,
    ) -> None:
        """A new question: its repositories and period, a header, then the answer in its thread.
        Bad input is one sentence plus the usage line, to the asker only (`usage=False`: the
        command router adds the line itself)."""
        try:
            question = check_question(question, cfg.lang)
            named, rest = split_repo(question)
            targets = await self._targets(conv, named)
            if named and not any(r.lower() == named.lower() for r, _ in targets):
                rest = question  # `in src/foo` named no repository: those were words of the question
            period = find_period(rest, cfg.tz, self.clock(), self.settings.max_range_days)
        except UsageError as exc:
            if not usage:
                raise
            return await self._bad_input(conv, platform, cfg.lang, exc, prefix)
        header = await platform.send(
            conv.channel, AnswerHeader(conv.user, question, None, cfg.lang), thread=conv.thread
        )
        root = header.thread_root
        info = ThreadInfo(
            targets[0][0], cfg.lang, cfg.tz, period.window.label, period=to_dict(period.window), repos=tuple(targets)
        )
        await self.threads.save(conv.platform, conv.channel, root, info)
        await self.answer(replace(conv, thread=root), platform, info, question, period.question)

    async def follow_up(
        self, conv: Conversation, platform: ChatPlatform, info: ThreadInfo, question: str, prefix: str = "/digest"
    ) -> None:
        """A question in a period's thread: the same period and repositories, unless it names
        another period (then the thread moves to that one)."""
        try:
            question = check_question(question, info.lang)
            period = find_period(question, info.tz, self.clock(), self.settings.max_range_days)
        except UsageError as exc:
            return await self._bad_input(conv, platform, info.lang, exc, prefix)
        search = period.question
        if period.said:
            assert conv.thread is not None  # a follow-up is a message in the period's thread
            info = replace(info, period=to_dict(period.window), label=period.window.label)
            await self.threads.save(conv.platform, conv.channel, conv.thread, info)
        await self.answer(conv, platform, info, question, search)

    def names_a_source(self, info: ThreadInfo, question: str) -> bool:
        """Does a follow-up name one of the answer's sources by SHA (a question about that commit)?"""
        if len(info.repos) > 1:
            return False  # the commit questions of a thread are about one repository
        words = [w.lower() for w in _SHA.findall(question)]
        return any(c.sha.lower().startswith(w) for w in words for c in info.commits)

    async def answer(
        self, conv: Conversation, platform: ChatPlatform, info: ThreadInfo, question: str, search: str
    ) -> None:
        """Stream the answer into the thread, then remember both turns and the answer's sources."""
        root = conv.thread
        # ask() passes the thread its header opened; follow_up() is called from inside the thread
        assert root is not None and info.period is not None
        targets = [(self.sources.get(repo), branch) for repo, branch in info.repos]
        past = await self.threads.memory(conv.platform, conv.channel, root)
        history = [Turn(t["role"], t["text"]) for t in past if t.get("sha") == TURN]
        trace = Trace()
        collected: list[str] = []
        pieces = self.period_qa.answer(
            targets, window_from_dict(info.period), question, info.lang, history, search=search, trace=trace
        )
        first = await _first_piece(pieces)  # bad input fails here, before anything is posted

        async def tee() -> AsyncIterator[str]:
            if first:
                collected.append(first)
                yield first
            async for piece in pieces:
                collected.append(piece)
                yield piece

        await platform.stream(conv.channel, root, tee(), conv=conv, lang=info.lang)
        if trace.sources:  # a follow-up may name one of them by SHA
            known = {c.sha for c in info.commits}
            added = tuple(ThreadCommit(s.sha, s.title, None, s.importance) for s in trace.sources if s.sha not in known)
            info = replace(info, commits=(info.commits + added)[-50:])
            await self.threads.save(conv.platform, conv.channel, root, info)
        await self.threads.add_turn(conv.platform, conv.channel, root, "user", question, TURN)
        await self.threads.add_turn(conv.platform, conv.channel, root, "assistant", "".join(collected), TURN)

    async def _bad_input(
        self, conv: Conversation, platform: ChatPlatform, lang: str, exc: UsageError, prefix: str
    ) -> None:
        line = f"⚠️ {localize(exc, lang)}\n" + text(lang, "usage.line", usage=usage_line(lang, "ask", prefix))
        await platform.reply_private(conv, Notice(line, "usage", lang))

    async def _targets(self, conv: Conversation, named: str | None) -> list[tuple[str, str | None]]:
        """(repository, branch) pairs: the named one when it exists, else the conversation's."""
        subs = await self.subs.for_channel(conv.platform, conv.channel)
        if named:
            by_name = {s.repo.lower(): s for s in subs}
            if named.lower() in by_name:
                sub = by_name[named.lower()]
                return [(sub.repo, sub.branch)]
            try:
                repo = self.policy.check_repo(conv, named)
                await self.sources.get(repo).default_branch()  # does it exist?
                return [(repo, None)]
            except (NotFoundError, UsageError):
                if not subs:
                    raise
        return [(repo, sub.branch if sub else None) for repo, sub in await self.policy.channel_repos(conv, ())]


async def _first_piece(pieces: AsyncIterator[str]) -> str:
    try:
        return await pieces.__anext__()
    except StopAsyncIteration:
        return ""
