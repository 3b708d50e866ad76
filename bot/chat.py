"""The conversation, platform-neutral: commands, subscriptions, digests on demand, deliveries,
and threaded Q&A. Adapters in handlers/ acknowledge the platform at once, then call in here.

Every user-facing failure ends as one short line (plus the usage of the command concerned)
shown to the person who caused it; nothing already posted is lost.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from typing import AsyncIterator, Callable

from .commands import (AskCmd, CommandError, ConfigCmd, DigestCmd, HelpCmd, ListCmd, SubscribeCmd,
                       UnsubscribeCmd, help_text, looks_like_command, parse_command, usage)
from .deliveries import CURRENT_JOB, Deliveries, DeliverySpec
from .models import (BotError, Commit, Digest, DigestEntry, Importance, NotFoundError, RetryLater, Subscription,
                     UsageError, Window, to_dict)
from .platform import (AnswerHeader, ChatPlatform, CommitChoice, CommitDetails, Conversation, Notice)
from .qa import Turn
from .sources import looks_like_github
from .store import StoreBusy, StoreUnavailable
from .subscriptions import Subscriptions
from .threads import Resolution, ThreadCommit, ThreadInfo, Threads, resolve_commit
from .window import parse_window

log = logging.getLogger(__name__)


TEXT = {
    "zh": {
        "building": "⏳ 正在生成 {repo} {label} 的日报…",
        "progress": "⏳ {repo} {label}：正在分析 {done}/{total} 个提交…",
        "subscribed": "✅ 已订阅 {repo}：每天 {at}（{tz}）推送前一天的日报 · 语言 {lang} · 最低重要度 {min}{branch}{empty}",
        "resubscribed": "✅ 已更新 {repo} 的订阅：每天 {at}（{tz}）· 语言 {lang} · 最低重要度 {min}{branch}{empty}",
        "unsubscribed": "✅ 已取消订阅 {repo}。",
        "not_subscribed": "这个频道没有订阅 {repo}。",
        "list_head": "本频道的订阅：", "list_none": "本频道还没有订阅。用 `{prefix} subscribe owner/repo` 添加。",
        "list_item": "• {repo} — 每天 {at}（{tz}）· {lang} · 最低 {min}{branch}{empty}",
        "config": "⚙️ 频道设置：语言 {lang} · 时区 {tz} · 线程提问 {questions} · 附带报告文件 {file}",
        "questions_mention": "需要 @我", "questions_all": "线程内任意消息",
        "on": "开", "off": "关", "branch": " · 分支 {branch}", "skip_empty": " · 空日不推送",
        "admins_only": "只有管理员可以修改本频道的订阅。",
        "storage_down": "⚠️ 机器人的存储（Redis）暂时无法访问，请稍后再试。",
        "busy": "⏳ 机器人现在非常忙，请稍后再试。",
        "queued": "⏳ 已排队（第 {n} 位）：机器人正忙，空出来后马上处理你的请求。",
        "internal": "⚠️ 出错了（{kind}），已记录日志。请稍后再试。",
        "usage": "用法：`{usage}`",
        "not_found_ref": "在 {repos} 中没有找到提交 {ref}。",
        "choose": "你问的是哪个提交？",
        "ask_hint": "请在这个线程里 @我，提出关于 `{sha}` 的问题。",
        "repo_policy": "在聊天里只能查询 GitHub 仓库（owner/name）或默认仓库 {default}。",
        "no_question": "请在问题里写点内容，例如：这个改动会影响什么？",
        "unknown_thread": "我不知道这个线程对应哪个日报（可能已超过 30 天）。请用 `{prefix} ask <sha> <问题>` 提问。",
        "failed": "⚠️ 无法生成 {repo} {label} 的日报：{reason}",
        "no_repo": "本频道还没有订阅任何仓库；请指定仓库，例如 2026-01-28 owner/repo，或先 subscribe owner/repo。",
        "push_failed": "⚠️ 今天的 {repo} 日报推送失败（已重试 {n} 次）：{reason}",
    },
    "en": {
        "building": "⏳ Building the {label} digest for {repo}…",
        "progress": "⏳ {repo} {label}: analysing {done}/{total} commits…",
        "subscribed": "✅ Subscribed to {repo}: the previous day's digest every day at {at} ({tz}) · language {lang} · minimum importance {min}{branch}{empty}",
        "resubscribed": "✅ Updated the {repo} subscription: every day at {at} ({tz}) · language {lang} · minimum importance {min}{branch}{empty}",
        "unsubscribed": "✅ Unsubscribed from {repo}.",
        "not_subscribed": "This channel is not subscribed to {repo}.",
        "list_head": "This channel's subscriptions:", "list_none": "No subscriptions here yet. Add one with `{prefix} subscribe owner/repo`.",
        "list_item": "• {repo} — daily at {at} ({tz}) · {lang} · min {min}{branch}{empty}",
        "config": "⚙️ Channel settings: language {lang} · time zone {tz} · thread questions {questions} · report file {file}",
        "questions_mention": "need a mention", "questions_all": "any thread message",
        "on": "on", "off": "off", "branch": " · branch {branch}", "skip_empty": " · empty days skipped",
        "admins_only": "Only the bot's admins can change this channel's subscriptions.",
        "storage_down": "⚠️ The bot's storage (Redis) is unreachable right now; please try again shortly.",
        "busy": "⏳ The bot is very busy right now; please try again in a minute.",
        "queued": "⏳ Queued (position {n}): the bot is busy; your request runs as soon as a worker is free.",
        "internal": "⚠️ Something went wrong ({kind}); it has been logged. Please try again later.",
        "usage": "Usage: `{usage}`",
        "not_found_ref": "No commit {ref} found in {repos}.",
        "choose": "Which commit do you mean?",
        "ask_hint": "Mention me in this thread with your question about `{sha}`.",
        "repo_policy": "In chat you can name GitHub repositories (owner/name) or the default repository {default}.",
        "no_question": "Please ask something, e.g. what could this change break?",
        "unknown_thread": "I don't know which digest this thread belongs to (it may be older than 30 days). Ask with `{prefix} ask <sha> <question>`.",
        "failed": "⚠️ Could not build the {label} digest for {repo}: {reason}",
        "no_repo": "This channel has no subscriptions yet; name a repository (e.g. 2026-01-28 owner/repo) or subscribe to one first.",
        "push_failed": "⚠️ Today's {repo} digest could not be delivered (tried {n} times): {reason}",
    },
}


_VERBS = {DigestCmd: "digest", SubscribeCmd: "subscribe", UnsubscribeCmd: "unsubscribe", ListCmd: "list",
          AskCmd: "ask", ConfigCmd: "config", HelpCmd: "help"}


def say(lang: str, key: str, /, **values) -> str:
    return TEXT.get(lang, TEXT["en"])[key].format(**values)


class ChatService:
    def __init__(self, services, platforms: dict[str, ChatPlatform] | None = None,
                 clock: Callable[[], datetime] | None = None):
        self.services = services
        self.settings = services.settings
        self.store = services.store
        self.subs = Subscriptions(services.store, services.settings)
        self.threads = Threads(services.store)
        self.platforms: dict[str, ChatPlatform] = dict(platforms or {})
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self._tasks: set[asyncio.Task] = set()
        self.jobs = None  # the job queue, when this process hands requests to workers
        self.worker = None  # the job worker running in this process, if any
        self.deliveries = Deliveries(self)

    say = staticmethod(say)

    def register(self, platform: ChatPlatform) -> None:
        self.platforms[platform.name] = platform

    # --- background work (adapters ack first, then hand the work here) -------------------------------
    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def submit(self, kind: str, conv: Conversation, **args) -> None:
        """Adapters hand every user request here once they have acknowledged the platform:
        kind "command" (text, prefix), "message" (text, mentioned, prefix) or "action"
        (action, value, question). The arguments are JSON values: with a job queue the request
        runs in a worker (any process); without one (tests, a single process without a queue)
        it runs here in the background. An overloaded bot says "queued, position n"."""
        if self.jobs is None:
            self.spawn(self.run_request(kind, to_dict(conv), args))
            return
        platform = self.platforms[conv.platform]
        try:
            job = await self.jobs.enqueue("request", kind, to_dict(conv), args)
        except BaseException as exc:  # noqa: BLE001 — one sentence, never silence
            await self._report(platform, conv, self.settings.default_lang, exc)
            return
        # Where it stands is told in the background: the platform's acknowledgement (which may
        # wait for this call) never waits for a message to be posted.
        self.spawn(self._tell_position(platform, conv, job.job_id))

    async def _tell_position(self, platform, conv: Conversation, job_id: str) -> None:
        lang = self.settings.default_lang
        try:
            position = await self.jobs.position(job_id)
            if position > 0:
                lang = (await self.subs.config(conv.platform, conv.channel)).lang
                await self._private(platform, conv, Notice(say(lang, "queued", n=position), "progress", lang))
        except BaseException as exc:  # noqa: BLE001
            await self._report(platform, conv, lang, exc)

    async def run_request(self, kind: str, conv: dict, args: dict, job_id: str | None = None) -> None:
        """Run a request handed over by `submit` (in a worker, or here)."""
        token = CURRENT_JOB.set(job_id)
        try:
            c = Conversation(**conv)
            if kind == "command":
                await self.on_command(c, args["text"], prefix=args.get("prefix") or "/digest")
            elif kind == "message":
                await self.on_message(c, args["text"], mentioned=bool(args.get("mentioned")),
                                      prefix=args.get("prefix") or "/digest")
            elif kind == "action":
                await self.on_action(c, args["action"], args.get("value") or {}, question=args.get("question"))
            else:
                log.error("unknown request kind %r dropped", kind)
        finally:
            CURRENT_JOB.reset(token)

    async def run_delivery(self, spec: dict, job_id: str | None = None) -> str:
        return await self.deliveries.run(DeliverySpec.from_dict(spec))

    async def run_build(self, spec: dict) -> str:
        """Build (and cache) a digest ahead of its deliveries, which share the result."""
        from .models import window_from_dict

        source = self.services.source(spec["repo"])
        digest = await self.services.builder.build(source, window_from_dict(spec["window"]), spec["lang"],
                                                   spec.get("branch"))
        return f"{len(digest.entries)} commits"

    async def drain_local(self) -> None:
        """Wait for the requests running in this process's background (shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def drain(self) -> None:
        """Wait for every handed-off request, and for this process's worker to run out of due
        jobs (tests, shutdown)."""
        while True:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            if self.worker is None or await self.worker.idle():
                if not self._tasks:
                    return
            else:
                await asyncio.sleep(0.05)

    async def first_time(self, platform: str, event_id: str, ttl: int) -> bool:
        """Event dedupe: platforms re-send events they think we missed. With Redis down the
        event is let through, so the user is told the storage is unreachable instead of nothing."""
        if not event_id:
            return True
        try:
            return await self.store.claim(self.store.k("event", platform, event_id), ttl)
        except StoreUnavailable as exc:
            log.error("event dedupe skipped: %s", exc)
            return True

    # --- entry points --------------------------------------------------------------------------------
    async def on_command(self, conv: Conversation, text: str, *, prefix: str = "/digest") -> None:
        platform = self.platforms[conv.platform]
        lang = self.settings.default_lang
        verb = None
        try:
            cfg = await self.subs.config(conv.platform, conv.channel)
            lang = cfg.lang
            cmd = parse_command(text)
            verb = _VERBS[type(cmd)]
            await self._run_command(conv, platform, cmd, cfg, prefix)
        except CommandError as exc:
            line = f"⚠️ {exc}\n" + (say(lang, "usage", usage=usage(lang, exc.command, prefix)) if exc.command
                                    else help_text(lang, prefix))
            await self._private(platform, conv, Notice(line, "usage", lang))
        except UsageError as exc:  # well-formed but unusable (a future date, an unknown repo…)
            line = f"⚠️ {exc}" + (f"\n{say(lang, 'usage', usage=usage(lang, verb, prefix))}" if verb else "")
            await self._private(platform, conv, Notice(line, "usage", lang))
        except BaseException as exc:  # noqa: BLE001 — every failure gets one sentence, never silence
            await self._report(platform, conv, lang, exc)

    async def on_message(self, conv: Conversation, text: str, *, mentioned: bool, prefix: str = "/digest") -> None:
        """A message the bot can see: in a bot-started thread, a DM, or a mention. Decides whether
        it is a command, a question, or none of the bot's business."""
        platform = self.platforms[conv.platform]
        lang = self.settings.default_lang
        try:
            cfg = await self.subs.config(conv.platform, conv.channel)
            lang = cfg.lang
            if (mentioned or conv.is_dm) and not conv.thread and looks_like_command(text):
                return await self.on_command(conv, text, prefix=prefix)
            if not conv.thread and not (mentioned or conv.is_dm):
                return  # ordinary channel chatter
            info = await self.threads.get(conv.platform, conv.channel, conv.thread) if conv.thread else None
            if info is None:
                if conv.thread and not (mentioned or conv.is_dm):
                    return  # someone else's thread: not for us
                if looks_like_command(text):
                    return await self.on_command(conv, text, prefix=prefix)
                if conv.thread:
                    return await platform.send(conv.channel, Notice(say(lang, "unknown_thread", prefix=prefix), lang=lang),
                                               thread=conv.thread)
                return await self._question_outside_thread(conv, platform, text, lang, prefix)
            if not (mentioned or conv.is_dm or cfg.questions == "all"):
                return
            await self._question_in_thread(conv, platform, info, text)
        except BaseException as exc:  # noqa: BLE001
            await self._report(platform, conv, lang, exc)

    async def on_action(self, conv: Conversation, action: str, value: dict, question: str | None = None) -> None:
        """Buttons: ask (with the question when the platform collected one), details, choose."""
        platform = self.platforms[conv.platform]
        lang = value.get("lang") or self.settings.default_lang
        try:
            root = value.get("thread") or conv.thread
            info = await self.threads.get(conv.platform, conv.channel, root) if root else None
            if info is not None:  # the thread knows how commands name its repository
                value = {**value, "repo": info.repo}
            elif value.get("repo") is not None:  # only the click's value names it: as typed, re-checked
                value = {**value, "repo": self.check_repo(conv, str(value["repo"]), lang)}
            if action == "details":
                return await self._details(conv, platform, value, info)
            if action in ("ask", "choose"):
                sha = value["sha"]
                if info is None:
                    info = ThreadInfo(value["repo"], lang, value.get("tz") or self.settings.default_tz, "",
                                      (ThreadCommit(sha, value.get("title", "")),))
                if root:
                    info = await self.threads.focus(conv.platform, conv.channel, root, info, sha)
                q = question or value.get("question")
                if not q:
                    return await self._private(platform, conv, Notice(say(info.lang, "ask_hint", sha=sha[:7]), lang=info.lang))
                source = self.services.source(info.repo)
                commit = await source.get_commit(sha)
                ask_conv = replace(conv, thread=root)
                if question:  # collected by a form: show what was asked before the answer
                    await platform.send(conv.channel, AnswerHeader(conv.user, q, commit, info.lang), thread=root)
                return await self._answer(ask_conv, platform, info, root, commit, q)
            raise UsageError(f"Unknown button action '{action}'.")
        except BaseException as exc:  # noqa: BLE001
            await self._report(platform, conv, lang, exc)

    # --- commands ------------------------------------------------------------------------------------
    async def _run_command(self, conv, platform, cmd, cfg, prefix) -> None:
        lang = cfg.lang
        if isinstance(cmd, HelpCmd):
            return await self._private(platform, conv, Notice(help_text(lang, prefix), lang=lang))
        if isinstance(cmd, DigestCmd):
            return await self._digest_command(conv, platform, cmd, cfg)
        if isinstance(cmd, ListCmd):
            return await self._private(platform, conv, Notice(await self._listing(conv, cfg, prefix), lang=lang))
        if isinstance(cmd, ConfigCmd):
            self._require_admin(conv, lang)
            updated = await self.subs.set_config(conv.platform, conv.channel, lang=cmd.lang, tz=cmd.tz,
                                                 questions=cmd.questions, file=cmd.file)
            text = self._config_line(updated)
            caveat = getattr(platform, "config_caveat", None)  # a platform may say why a setting cannot work yet
            if caveat is not None and not conv.is_dm:
                note = await caveat(conv.channel, updated, updated.lang)
                text += "\n" + note if note else ""
            return await platform.send(conv.channel, Notice(text, lang=updated.lang), thread=conv.thread)
        if isinstance(cmd, SubscribeCmd):
            return await self._subscribe(conv, platform, cmd, cfg)
        if isinstance(cmd, UnsubscribeCmd):
            self._require_admin(conv, lang)
            removed = await self.subs.remove(conv.platform, conv.channel, cmd.repo)
            key = "unsubscribed" if removed else "not_subscribed"
            return await (platform.send(conv.channel, Notice(say(lang, key, repo=cmd.repo), lang=lang), thread=conv.thread)
                          if removed else self._private(platform, conv, Notice(say(lang, key, repo=cmd.repo), lang=lang)))
        if isinstance(cmd, AskCmd):
            return await self._ask_command(conv, platform, cmd, cfg)

    def _require_admin(self, conv: Conversation, lang: str) -> None:
        raw = {"slack": self.settings.slack_admin_users, "feishu": self.settings.feishu_admin_users}.get(conv.platform, "")
        admins = self.settings.admin_list(raw)
        if admins and conv.user not in admins:
            raise UsageError(say(lang, "admins_only"))

    def check_repo(self, conv: Conversation, repo: str, lang: str) -> str:
        """Chat users may name GitHub repositories or the configured default; only the operator's
        own terminal may point at arbitrary local paths on the bot's machine."""
        if repo in (self.settings.default_repo, "."):
            return self.settings.default_repo
        default_name = self._default_name()
        if default_name and repo.lower() == default_name.lower():
            return self.settings.default_repo  # a local clone named by its owner/name: stay local
        if conv.platform == "console" or looks_like_github(repo):
            return repo
        raise UsageError(say(lang, "repo_policy", default=default_name or self.settings.default_repo))

    def _default_name(self) -> str | None:
        try:
            return self.services.source(self.settings.default_repo).name
        except BotError:
            return None

    async def _channel_repos(self, conv, cmd_repos, lang) -> list[tuple[str, Subscription | None]]:
        if cmd_repos:
            return [(self.check_repo(conv, r, lang), None) for r in cmd_repos]
        subs = await self.subs.for_channel(conv.platform, conv.channel)
        if subs:
            return [(s.repo, s) for s in subs]
        try:
            self.services.source(self.settings.default_repo)
        except UsageError:  # no usable default (e.g. DEFAULT_REPO unset and not run from a clone)
            raise CommandError(say(lang, "no_repo"), "digest") from None
        return [(self.settings.default_repo, None)]

    async def _digest_command(self, conv, platform, cmd: DigestCmd, cfg) -> None:
        lang = cfg.lang
        targets = await self._channel_repos(conv, cmd.repos, lang)
        request = CURRENT_JOB.get() or uuid.uuid4().hex
        for repo, sub in targets:
            tz = sub.tz if sub else cfg.tz
            window = parse_window(cmd.when or "yesterday", tz, self.clock(), self.settings.max_range_days)
            source = self.services.source(repo)
            branch = (sub.branch if sub else None) or await source.default_branch()  # validates the repo first
            spec = DeliverySpec(platform=conv.platform, channel=conv.channel, repo=repo, window=to_dict(window),
                                lang=sub.lang if sub else lang, key=self.store.k("ondemand", request, repo.lower()),
                                branch=branch, min_importance=sub.min_importance.value if sub else "low",
                                attach=cfg.file, progress=True)
            await self.deliveries.run(spec)

    async def _subscribe(self, conv, platform, cmd: SubscribeCmd, cfg) -> None:
        lang = cfg.lang
        self._require_admin(conv, lang)
        repo = self.check_repo(conv, cmd.repo, lang)
        source = self.services.source(repo)
        if cmd.branch:
            await source.list_commits(parse_window("today", "UTC", self.clock()), cmd.branch)  # validates it
        else:
            await source.default_branch()  # validates the repository
        existing = {s.repo.lower(): s for s in await self.subs.for_channel(conv.platform, conv.channel)}
        old = existing.get(repo.lower())
        base = old or Subscription(conv.platform, conv.channel, repo, tz=cfg.tz, lang=cfg.lang)
        sub = replace(base, repo=repo, at=cmd.at or base.at, tz=cmd.tz or base.tz, lang=cmd.lang or base.lang,
                      min_importance=Importance(cmd.min_importance) if cmd.min_importance else base.min_importance,
                      branch=cmd.branch or base.branch,
                      post_empty=base.post_empty if cmd.post_empty is None else cmd.post_empty)
        await self.subs.upsert(sub)
        key = "resubscribed" if old else "subscribed"
        await platform.send(conv.channel, Notice(say(lang, key, **self._sub_fields(sub, lang)), lang=lang), thread=conv.thread)

    def _sub_fields(self, sub: Subscription, lang: str) -> dict:
        return dict(repo=sub.repo, at=sub.at, tz=sub.tz, lang=sub.lang, min=sub.min_importance.value,
                    branch=say(lang, "branch", branch=sub.branch) if sub.branch else "",
                    empty="" if sub.post_empty else say(lang, "skip_empty"))

    async def _listing(self, conv, cfg, prefix) -> str:
        lang = cfg.lang
        subs = await self.subs.for_channel(conv.platform, conv.channel)
        lines = [say(lang, "list_head")] if subs else [say(lang, "list_none", prefix=prefix)]
        lines += [say(lang, "list_item", **self._sub_fields(s, lang)) for s in subs]
        return "\n".join(lines + [self._config_line(cfg)])

    def _config_line(self, cfg) -> str:
        lang = cfg.lang
        return say(lang, "config", lang=cfg.lang, tz=cfg.tz, questions=say(lang, f"questions_{cfg.questions}"),
                   file=say(lang, "on" if cfg.file else "off"))

    # --- questions -----------------------------------------------------------------------------------
    async def _ask_command(self, conv, platform, cmd: AskCmd, cfg) -> None:
        lang = cfg.lang
        repos = [r for r, _ in await self._channel_repos(conv, (), lang)]
        repo, commit = await self._find_commit(repos, cmd.ref, lang)
        info = ThreadInfo(repo, lang, cfg.tz, "", (ThreadCommit(commit.sha, commit.title, commit.pr_number),),
                          commit.sha)
        header = await platform.send(conv.channel, AnswerHeader(conv.user, cmd.question, commit, lang), thread=conv.thread)
        root = header.thread_root
        await self.threads.save(conv.platform, conv.channel, root, info)
        await self._answer(replace(conv, thread=root), platform, info, root, commit, cmd.question)

    async def _find_commit(self, repos: list[str], ref: str, lang: str) -> tuple[str, Commit]:
        """The first of `repos` that has the commit (a SHA prefix, or the commit of PR #N)."""
        for repo in repos:
            source = self.services.source(repo)
            try:
                commit = (await source.pr_commit(int(ref[1:])) if ref.startswith("#")
                          else await source.get_commit(ref))
            except NotFoundError:
                continue
            if commit is not None:
                return repo, commit
        names = ", ".join(self.services.source(r).name for r in repos)
        raise UsageError(say(lang, "not_found_ref", ref=ref, repos=names))

    async def _question_outside_thread(self, conv, platform, text, lang, prefix) -> None:
        """A mention or DM that is not a command: a question naming a SHA or #PR in the channel's repos."""
        from .threads import _HEX, _PR

        ref = next((w for w in _HEX.findall(text) if len(w) >= 7), None) or next(
            (f"#{n}" for n in _PR.findall(text)), None)
        if ref is None:
            return await self._private(platform, conv, Notice(help_text(lang, prefix), lang=lang))
        cfg = await self.subs.config(conv.platform, conv.channel)
        await self._ask_command(conv, platform, AskCmd(ref, text), cfg)

    async def _question_in_thread(self, conv, platform, info: ThreadInfo, text: str) -> None:
        root = conv.thread
        resolution: Resolution = resolve_commit(text, info)
        source = self.services.source(info.repo)
        if resolution.sha is None and resolution.outside_ref:
            try:
                commit = await source.get_commit(resolution.outside_ref)
            except BotError:
                commit = None
            if commit is not None:
                info = replace(info, commits=info.commits + (ThreadCommit(commit.sha, commit.title, commit.pr_number),))
                resolution = Resolution(sha=commit.sha)
        if resolution.sha is None:
            choices = resolution.candidates or info.commits[:5]
            commits = tuple([await source.get_commit(c.sha) for c in choices])
            return await platform.send(conv.channel, CommitChoice(text, commits, tuple(info.repo for _ in commits),
                                                                  info.lang), thread=root)
        info = await self.threads.focus(conv.platform, conv.channel, root, info, resolution.sha)
        commit = await source.get_commit(resolution.sha)
        await self._answer(conv, platform, info, root, commit, text)

    async def _answer(self, conv, platform, info: ThreadInfo, root: str, commit: Commit, question: str) -> None:
        source = self.services.source(info.repo)
        past = await self.threads.history(conv.platform, conv.channel, root)
        history = [Turn(t["role"], t["text"]) for t in past if t.get("sha") == commit.sha]
        collected: list[str] = []
        pieces = self.services.qa.answer(source, commit, question, info.lang, history)
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

    async def _details(self, conv, platform, value: dict, info: ThreadInfo | None) -> None:
        repo = value.get("repo") or (info.repo if info else self.settings.default_repo)
        lang = value.get("lang") or (info.lang if info else self.settings.default_lang)
        tz = value.get("tz") or (info.tz if info else self.settings.default_tz)
        source = self.services.source(repo)
        commit = await source.get_commit(value["sha"])
        analysis = await self.services.builder.analysis(source, commit, lang)
        window = parse_window("today", tz, self.clock())
        digest = Digest(repo=source.name, branch="", window=replace(window, label=info.label if info else ""),
                        lang=lang, entries=(DigestEntry(commit, analysis),), repo_url=source.web_url)
        await self._private(platform, conv, CommitDetails(digest, digest.entries[0]))

    # --- scheduled delivery (the clock calls this) ----------------------------------------------------
    async def deliver_subscription(self, sub: Subscription, window: Window, progress_key: str) -> str:
        """One push without a ledger (the ledger is the clock's): for tools and tests."""
        spec = DeliverySpec(platform=sub.platform, channel=sub.channel, repo=sub.repo, window=to_dict(window),
                            lang=sub.lang, key=progress_key, branch=sub.branch,
                            min_importance=sub.min_importance.value, post_empty=sub.post_empty)
        return await self.deliveries.run(spec)

    async def report_push_failure(self, sub: Subscription, attempts: int, reason: str) -> None:
        platform = self.platforms[sub.platform]
        await platform.send(sub.channel, Notice(say(sub.lang, "push_failed", repo=sub.repo, n=attempts, reason=reason), "error", sub.lang))

    # --- failures ------------------------------------------------------------------------------------
    async def _private(self, platform, conv, content) -> None:
        await platform.reply_private(conv, content)

    async def _report(self, platform, conv, lang, exc: BaseException) -> None:
        if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
            raise exc
        if isinstance(exc, RetryLater) and CURRENT_JOB.get():
            raise exc  # the queue runs this request again (and it resumes): nothing to tell yet
        if isinstance(exc, StoreBusy):
            text = say(lang, "busy")
        elif isinstance(exc, StoreUnavailable):
            log.error("storage unavailable: %s", exc)
            text = say(lang, "storage_down")
        elif isinstance(exc, BotError):
            text = f"⚠️ {exc}"
        else:
            log.exception("unexpected failure handling a %s request", conv.platform)
            text = say(lang, "internal", kind=type(exc).__name__)
        try:
            await platform.reply_private(conv, Notice(text, "error", lang))
        except Exception:  # the platform itself is down: the log is all we have
            log.exception("could not tell the user about a failure")


async def _first_piece(pieces: AsyncIterator[str]) -> str:
    try:
        return await pieces.__anext__()
    except StopAsyncIteration:
        return ""
