"""The questions family of the conversation: which commit a question is about and the answer
streamed into its thread — for the `ask` command, a question in a digest's thread, a mention
naming a SHA or #PR, and the Ask / Details / choose buttons. (What the answer says is
bot/answers/commit_qa.py's; which commit a thread's question means is bot/channels/threads.py's.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import datetime

from settings import Settings

from ..answers.question import Turn
from ..channels.subscriptions import Subscriptions
from ..channels.threads import Resolution, ThreadCommit, ThreadInfo, Threads, commit_ref, resolve_commit
from ..core.chat_platform import AnswerHeader, ChatPlatform, CommitChoice, CommitDetails, Conversation, Notice
from ..core.models import BotError, Commit, Digest, DigestEntry, NotFoundError, UsageError
from ..core.window import parse_window
from ..i18n import phrase, text
from .period_questions import PeriodQuestions, is_period_question
from .policy import ChannelPolicy
from .ports import Analyses, CommitAnswers, SourceRegistry


class Questions:
    def __init__(
        self,
        settings: Settings,
        sources: SourceRegistry,
        builder: Analyses,
        qa: CommitAnswers,
        threads: Threads,
        subs: Subscriptions,
        policy: ChannelPolicy,
        period: PeriodQuestions,
        help_text: Callable[[str, str], str],
        clock: Callable[[], datetime],
    ):
        self.settings = settings
        self.sources = sources
        self.builder = builder
        self.qa = qa
        self.threads = threads
        self.subs = subs
        self.policy = policy
        self.period = period  # questions that name no commit: about a period
        self.help_text = help_text  # the commands' help, for a mention that is no question
        self.clock = clock

    # --- where questions come from -------------------------------------------------------------------
    async def ask(self, conv: Conversation, platform: ChatPlatform, ref: str, question: str, cfg) -> None:
        """`ask <sha|#PR> <question>`: the answer goes into a new thread under the question."""
        repos = [r for r, _ in await self.policy.channel_repos(conv, ())]
        repo, commit = await self.find_commit(repos, ref)
        info = ThreadInfo(
            repo, cfg.lang, cfg.tz, "", (ThreadCommit(commit.sha, commit.title, commit.pr_number),), commit.sha
        )
        header = await platform.send(
            conv.channel, AnswerHeader(conv.user, question, commit, cfg.lang), thread=conv.thread
        )
        root = header.thread_root
        await self.threads.save(conv.platform, conv.channel, root, info)
        await self.answer(replace(conv, thread=root), platform, info, root, commit, question)

    async def outside_thread(
        self, conv: Conversation, platform: ChatPlatform, question: str, lang: str, prefix: str
    ) -> None:
        """A mention or DM that is not a command: a question naming a SHA or #PR in the channel's
        repositories; without one, a question about a period when it reads like a question, else
        the help."""
        ref = commit_ref(question)
        cfg = await self.subs.config(conv.platform, conv.channel)
        if ref is None:
            if is_period_question(question, cfg.tz, self.clock(), self.settings.max_range_days):
                return await self.period.ask(conv, platform, question, cfg, prefix)
            return await platform.reply_private(conv, Notice(self.help_text(lang, prefix), lang=lang))
        await self.ask(conv, platform, ref, question, cfg)

    async def in_thread(
        self, conv: Conversation, platform: ChatPlatform, info: ThreadInfo, question: str, prefix: str = "/digest"
    ) -> None:
        """A question in a thread the bot started: the commit it names, else the one asked about
        last; when several fit, the asker chooses. In a period's thread: the period again, unless
        it names one of the answer's sources by SHA."""
        if info.period is not None and not self.period.names_a_source(info, question):
            return await self.period.follow_up(conv, platform, info, question, prefix)
        root = conv.thread
        assert root is not None  # Router.on_message found `info` by this thread
        resolution: Resolution = resolve_commit(question, info)
        source = self.sources.get(info.repo)
        if resolution.sha is None and resolution.outside_ref:
            try:
                commit = await source.get_commit(resolution.outside_ref)
            except BotError:
                commit = None
            if commit is not None:
                info = replace(info, commits=info.commits + (ThreadCommit(commit.sha, commit.title, commit.pr_number),))
                resolution = Resolution(sha=commit.sha)
        if resolution.sha is None and _no_commits(info):  # a quiet day's digest: nothing to choose from
            line = text(info.lang, "notices.empty_thread", label=info.label, repo=source.name, prefix=prefix)
            await platform.send(conv.channel, Notice(line, lang=info.lang), thread=root)
            return
        if resolution.sha is None:
            choices = resolution.candidates or info.commits[:5]
            commits = tuple([await source.get_commit(c.sha) for c in choices])
            await platform.send(
                conv.channel, CommitChoice(question, commits, tuple(info.repo for _ in commits), info.lang), thread=root
            )
            return
        info = await self.threads.focus(conv.platform, conv.channel, root, info, resolution.sha)
        commit = await source.get_commit(resolution.sha)
        await self.answer(conv, platform, info, root, commit, question)

    async def button(
        self,
        conv: Conversation,
        platform: ChatPlatform,
        action: str,
        value: dict,
        info: ThreadInfo | None,
        root: str | None,
        question: str | None,
        lang: str,
    ) -> None:
        """Ask (with the question when the platform collected one), choose, details."""
        if action == "details":
            return await self.details(conv, platform, value, info)
        if action not in ("ask", "choose"):
            raise UsageError(phrase("errors.unknown_action", action=action))
        sha = value["sha"]
        if info is None:
            info = ThreadInfo(
                value["repo"],
                lang,
                value.get("tz") or self.settings.default_tz,
                "",
                (ThreadCommit(sha, value.get("title", "")),),
            )
        if root:
            info = await self.threads.focus(conv.platform, conv.channel, root, info, sha)
        q = question or value.get("question")
        if not q:
            return await platform.reply_private(
                conv, Notice(text(info.lang, "notices.ask_hint", sha=sha[:7]), lang=info.lang)
            )
        source = self.sources.get(info.repo)
        commit = await source.get_commit(sha)
        if question or root is None:  # collected by a form, or no thread yet: the header shows it / opens one
            header = await platform.send(conv.channel, AnswerHeader(conv.user, q, commit, info.lang), thread=root)
            if root is None:
                root = header.thread_root
                await self.threads.save(conv.platform, conv.channel, root, info)
        await self.answer(replace(conv, thread=root), platform, info, root, commit, q)

    # --- the work --------------------------------------------------------------------------------------
    async def find_commit(self, repos: list[str], ref: str) -> tuple[str, Commit]:
        """The first of `repos` that has the commit (a SHA prefix, or the commit of PR #N)."""
        for repo in repos:
            source = self.sources.get(repo)
            try:
                commit = await source.pr_commit(int(ref[1:])) if ref.startswith("#") else await source.get_commit(ref)
            except NotFoundError:
                continue
            if commit is not None:
                return repo, commit
        names = ", ".join(self.sources.get(r).name for r in repos)
        raise UsageError(phrase("errors.not_found_ref", ref=ref, repos=names))

    async def answer(
        self, conv: Conversation, platform: ChatPlatform, info: ThreadInfo, root: str, commit: Commit, question: str
    ) -> None:
        """Stream the answer into the thread and remember both turns."""
        source = self.sources.get(info.repo)
        past = await self.threads.memory(conv.platform, conv.channel, root)
        history = [Turn(t["role"], t["text"]) for t in past if t.get("sha") == commit.sha]
        collected: list[str] = []
        pieces = self.qa.answer(source, commit, question, info.lang, history)
        first = await _first_piece(pieces)  # bad questions fail here, before anything is posted

        async def tee() -> AsyncIterator[str]:
            if first:
                collected.append(first)
                yield first
            async for piece in pieces:
                collected.append(piece)
                yield piece

        await platform.stream(conv.channel, root, tee(), conv=conv, lang=info.lang)
        await self.threads.add_turn(conv.platform, conv.channel, root, "user", question, commit.sha)
        await self.threads.add_turn(conv.platform, conv.channel, root, "assistant", "".join(collected), commit.sha)

    async def details(self, conv: Conversation, platform: ChatPlatform, value: dict, info: ThreadInfo | None) -> None:
        """Everything about one commit (the Details button), to the asker only."""
        settings = self.settings
        repo = value.get("repo") or (info.repo if info else settings.default_repo)
        lang = value.get("lang") or (info.lang if info else settings.default_lang)
        tz = value.get("tz") or (info.tz if info else settings.default_tz)
        source = self.sources.get(repo)
        if info is not None and _no_commits(info):  # a quiet day's digest has no Details to show
            line = text(lang, "notices.empty_details", label=info.label, repo=source.name)
            return await platform.reply_private(conv, Notice(line, lang=lang))
        commit = await source.get_commit(value["sha"])
        analysis = await self.builder.analysis(source, commit, lang)
        window = parse_window("today", tz, self.clock())
        digest = Digest(
            repo=source.name,
            branch="",
            window=replace(window, label=info.label if info else ""),
            lang=lang,
            entries=(DigestEntry(commit, analysis),),
            repo_url=source.web_url,
            links=source.links,
        )
        await platform.reply_private(conv, CommitDetails(digest, digest.entries[0]))


def _no_commits(info: ThreadInfo) -> bool:
    """The thread of a digest (or roll-up) that had no commits."""
    return bool(info.label) and not info.commits and info.period is None


async def _first_piece(pieces: AsyncIterator[str]) -> str:
    try:
        return await pieces.__anext__()
    except StopAsyncIteration:
        return ""
