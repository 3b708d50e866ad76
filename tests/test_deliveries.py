"""Deliveries and the clock's failure path, through the terminal platform (what it prints is what
the channel would see): retries then one failure notice and a "failed" ledger, the lock released
after every attempt, one broken subscription not holding up the others, a half-delivered thread
resumed without repeats, high before medium before low."""

from __future__ import annotations

import io
import shutil
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core import metrics
from bot.core.chat_platform import Notice
from bot.core.models import BotError, Importance, RetryLater, Subscription, to_dict
from bot.core.window import day_window
from bot.delivery.spec import MAX_ATTEMPTS, DeliverySpec, scheduled_spec
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.gitrepo import GitRepo, bulk_commits

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
DAY = date(2026, 1, 28)


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "widgets", bare_origin="https://github.com/acme/widgets.git")
    r.commit("init", {"src/api.py": "def export_v1():\n    pass\n"}, when=datetime(2026, 1, 27, 9, tzinfo=SH))
    r.commit("[Docs] Fix typo in README", {"README.md": "Widgets\n"}, when=datetime(2026, 1, 28, 9, tzinfo=SH))
    r.commit("feat!: remove export_v1", {"src/api.py": "\n"}, when=datetime(2026, 1, 28, 10, tzinfo=SH))
    r.commit(
        "feat: add a --since flag to the exporter",
        {"src/cli.py": "".join(f"def option_{i}():\n    return {i}\n" for i in range(40))},
        when=datetime(2026, 1, 28, 11, tzinfo=SH),
    )
    return r


@pytest.fixture
async def bot(make_settings, repo):
    settings = make_settings(default_repo=str(repo.path), default_lang="en", catchup_minutes=60, clock_interval=0.01)
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: NOW)
    yield chat, out, settings
    await services.aclose()


async def test_a_push_that_keeps_failing_is_retried_then_reported_once(bot, repo, tmp_path):
    chat, out, settings = bot
    broken = tmp_path / "gone"
    shutil.copytree(repo.path, broken)
    sub = Subscription("console", "console", str(broken), at="09:20", tz="Asia/Shanghai", lang="en")
    await chat.subs.upsert(sub)
    shutil.rmtree(broken)  # the repository disappears after subscribing
    clock = chat.make_clock(settings=settings, now=lambda: NOW)
    outcomes = [r[0][2] for r in [await clock.tick() for _ in range(MAX_ATTEMPTS + 1)]]
    assert all(o.endswith("will retry") for o in outcomes[: MAX_ATTEMPTS - 1]), outcomes
    assert outcomes[MAX_ATTEMPTS - 1].startswith("gave up")
    assert outcomes[MAX_ATTEMPTS] == "already delivered"  # the ledger says so: no more attempts
    spec = scheduled_spec(chat.store, sub, DAY)
    assert "failed" in await chat.store.get_json(spec.ledger)
    shown = out.getvalue()
    assert shown.count("could not be delivered") == 1 and "tried 3 times" in shown  # MAX_ATTEMPTS, as documented
    assert "Daily update report" not in shown


async def test_each_failed_attempt_releases_its_lock(bot, tmp_path):
    chat, _out, settings = bot
    sub = Subscription("console", "console", str(tmp_path / "missing"), lang="en")
    spec = scheduled_spec(chat.store, sub, DAY)
    with pytest.raises(RetryLater) as first:
        await chat.deliveries.run(spec)
    assert "will retry" in str(first.value) and first.value.delay == settings.clock_interval * 2  # backing off
    # the next attempt may run at once: not "another worker is delivering"
    with pytest.raises(RetryLater) as second:
        await chat.deliveries.run(spec)
    assert "will retry" in str(second.value) and second.value.delay == settings.clock_interval * 4
    assert await chat.store.get_json(spec.key + ":lock") is None


async def test_while_one_runner_delivers_another_is_told_to_retry(bot, repo):
    chat, out, settings = bot
    sub = Subscription("console", "console", str(repo.path), lang="en")
    spec = scheduled_spec(chat.store, sub, DAY)
    assert await chat.store.lease(spec.key + ":lock", "someone-else", 30)
    with pytest.raises(RetryLater, match="another worker is delivering") as told:
        await chat.deliveries.run(spec)
    assert out.getvalue() == ""
    assert told.value.delay == settings.job_lease / 2  # looked at again before the holder's lease lapses


async def test_one_broken_subscription_does_not_hold_up_the_others(bot, repo, tmp_path):
    chat, out, settings = bot
    await chat.subs.upsert(
        Subscription("console", "console", str(tmp_path / "missing"), at="09:20", tz="Asia/Shanghai", lang="en")
    )
    await chat.subs.upsert(
        Subscription("console", "console", str(repo.path), at="09:20", tz="Asia/Shanghai", lang="en")
    )
    outcomes = {
        sub.repo: outcome for sub, _, outcome in await chat.make_clock(settings=settings, now=lambda: NOW).tick()
    }
    assert outcomes[str(repo.path)] == "delivered"
    assert outcomes[str(tmp_path / "missing")].endswith("will retry")
    assert out.getvalue().count("Daily update report (2026-01-28)") == 1


async def test_a_half_delivered_thread_is_finished_without_repeats_high_first(bot, repo):
    chat, out, _settings = bot
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "resume-test"),
    )
    full = await chat.deliveries.run(spec)
    assert full == "delivered"
    whole = out.getvalue()
    assert whole.startswith("[#1] Daily update report (2026-01-28)")  # no "building…" line for a push
    replies = whole.split("\n  ↳ ")[1:]
    titles = ("feat!: remove export_v1", "feat: add a --since flag", "[Docs] Fix typo")
    assert [[t in r for t in titles] for r in replies] == [
        [True, False, False],
        [False, True, False],
        [False, False, True],
    ]  # high, medium, low grouped
    # the same delivery cut short after the parent and its first reply: the rest, once
    out.truncate(0), out.seek(0)
    state = await chat.store.get_json(spec.key)
    resumed = DeliverySpec(**{**spec.__dict__, "key": chat.store.k("delivery", "resume-test-2")})
    await chat.store.set_json(resumed.key, {"parent": state["parent"], "sent": 1})
    assert await chat.deliveries.run(resumed) == "delivered"
    again = out.getvalue()
    assert "Daily update report" not in again and "feat!: remove export_v1" not in again
    assert again.count("feat: add a --since flag") == 1 and again.count("[Docs] Fix typo") == 1


async def test_low_commits_beyond_fifteen_are_one_line_not_more_messages(make_settings, tmp_path):
    r = GitRepo(tmp_path / "docs-only")
    bulk_commits(r, 40, datetime(2026, 1, 28, 9, tzinfo=SH), files=4, title="[Docs] Fix typo {i} in the guide")
    settings = make_settings(default_repo=str(r.path), default_lang="en")
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(
        services, {"console": ConsolePlatform(out=out, report_dir=tmp_path / "reports")}, clock=lambda: NOW
    )
    try:
        spec = DeliverySpec(
            platform="console",
            channel="console",
            repo=str(r.path),
            window=to_dict(day_window(DAY, "Asia/Shanghai")),
            lang="en",
            key=chat.store.k("delivery", "low"),
        )
        assert await chat.deliveries.run(spec) == "delivered"
    finally:
        await services.aclose()
    replies = out.getvalue().split("\n  ↳ ")[1:]
    assert len(replies) == 1 and "Low importance (40)" in replies[0]  # one message, not three
    assert replies[0].count("🟢 ") - 1 == 15  # the newest fifteen, then one line for the rest
    assert "… and 25 more of low importance, not listed here (`config file on` attaches" in replies[0]
    assert not list((tmp_path / "reports").glob("*")), "no report file unless the channel asked for one"


async def test_the_report_file_is_attached_when_the_channel_asks(bot, repo, tmp_path):
    chat, out, _settings = bot
    chat.platforms["console"] = ConsolePlatform(out=out, report_dir=tmp_path / "reports")
    await chat.subs.set_config("console", "console", file=True)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    assert await chat.deliveries.run(spec) == "delivered"
    files = list((tmp_path / "reports").glob("*.md"))
    assert [f.name for f in files] == ["acme_widgets-2026-01-28.md"]
    assert "Daily update report (2026-01-28)" in files[0].read_text()
    assert out.getvalue().count("📎") == 1
    # a week to resume an interrupted delivery, then the progress state goes
    assert 6 * 86400 < await chat.store.r.ttl(spec.key) <= 7 * 86400


@pytest.mark.parametrize(
    "post_empty,shown,outcome",
    [
        (True, "No new commits in acme/widgets on 2026-01-26 (Asia/Shanghai).", "delivered"),
        (False, "", "skipped (empty)"),
    ],
)
async def test_an_empty_day_posts_one_line_or_nothing(bot, repo, post_empty, shown, outcome):
    chat, out, _settings = bot
    sub = Subscription("console", "console", str(repo.path), lang="en", post_empty=post_empty)
    spec = scheduled_spec(chat.store, sub, date(2026, 1, 26))
    assert await chat.deliveries.run(spec) == outcome
    assert out.getvalue().strip().removeprefix("[#1] ") == shown
    assert await chat.deliveries.run(spec) == "already delivered"


class FlakyConsole(ConsolePlatform):
    """The terminal platform, with its `fail_at`-th post failing as a platform outage would."""

    def __init__(self, out, fail_at: int):
        super().__init__(out=out)
        self.posts, self.fail_at = 0, fail_at

    async def send(self, channel, content, *, thread=None, key=None):
        self.posts += 1
        if self.posts == self.fail_at:
            raise BotError("the chat platform is down")
        return await super().send(channel, content, thread=thread, key=key)


@pytest.mark.parametrize("fail_at", [2, 3, 4])  # the first, second or third thread reply fails
async def test_a_delivery_cut_by_an_outage_resumes_without_repeats(bot, repo, fail_at):
    chat, out, _settings = bot
    chat.platforms["console"] = FlakyConsole(out, fail_at)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    with pytest.raises(RetryLater, match="the chat platform is down"):
        await chat.deliveries.run(spec)
    assert await chat.deliveries.run(spec) == "delivered"
    shown = out.getvalue()
    parents = [m for m in shown.splitlines() if m.startswith("[#")]
    assert len(parents) == 1 and "Daily update report (2026-01-28)" in parents[0]
    replies = shown.split("\n  ↳ ")[1:]
    assert [
        sum(title in r for r in replies)
        for title in ("feat!: remove export_v1", "feat: add a --since flag", "[Docs] Fix typo")
    ] == [1, 1, 1]


async def test_the_thread_of_a_delivered_digest_answers_questions(bot, repo):
    chat, out, _settings = bot
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    assert await chat.deliveries.run(spec) == "delivered"
    out.truncate(0), out.seek(0)
    await ConsoleChat(chat.router, chat.platforms["console"]).handle("reply 1 what does remove export_v1 break?")
    answer = out.getvalue()
    assert "the hunks of" in answer and "-def export_v1():" in answer  # that commit's diff, re-read


async def test_on_demand_the_building_line_becomes_the_digest(bot, repo):
    chat, out, _settings = bot
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "on-demand"),
        progress=True,
    )
    assert await chat.deliveries.run(spec) == "delivered"
    edits = [line for line in out.getvalue().splitlines() if line.startswith("[#")]
    assert edits[0] == "[#1] ⏳ Building the 2026-01-28 digest for acme/widgets…"
    assert all(e.startswith("[#1] (updated) ⏳ acme/widgets 2026-01-28: analysing ") for e in edits[1:-1])
    assert edits[-1].startswith("[#1] (updated) Daily update report (2026-01-28)")


async def test_deliveries_are_counted_for_metrics(bot, repo):
    chat, _out, _settings = bot

    def delivered() -> float:
        return (
            metrics.REGISTRY.get_sample_value(
                "digestbot_deliveries_total", {"platform": "console", "outcome": "delivered"}
            )
            or 0.0
        )

    before = delivered()
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    assert await chat.deliveries.run(spec) == "delivered"
    assert delivered() == before + 1
    assert await chat.deliveries.run(spec) == "already delivered"  # the ledger says so
    assert delivered() == before + 1
    # the ledger outlives the catch-up and retry horizon by far: 40 days
    assert 39 * 86400 < await chat.store.r.ttl(spec.ledger) <= 40 * 86400


def test_log_lines_name_the_job_they_belong_to():
    import logging

    from bot.core.current_job import CURRENT_JOB, JobIdFilter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(JobIdFilter())
    handler.setFormatter(logging.Formatter("%(levelname)s%(job)s: %(message)s"))
    log = logging.getLogger("tests.jobid")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("outside any job")
        token = CURRENT_JOB.set("deliver:abc123")
        log.warning("inside one")
        CURRENT_JOB.reset(token)
    finally:
        log.removeHandler(handler)
    assert out.getvalue().splitlines() == ["WARNING: outside any job", "WARNING [deliver:abc123]: inside one"]


def test_a_queued_delivery_reads_back_what_was_queued(bot, repo):
    chat, _out, _settings = bot
    spec = scheduled_spec(
        chat.store, Subscription("console", "console", str(repo.path), lang="en", min_importance=Importance.HIGH), DAY
    )
    # a payload from a newer version may carry fields this one does not know: they are ignored
    assert DeliverySpec.from_dict({**to_dict(spec), "added_later": 1}) == spec


async def test_digest_asked_for_an_empty_day_says_so(bot, repo):
    """On demand (no ledger, no subscription), an empty day is always answered."""
    chat, out, _settings = bot
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(date(2026, 1, 26), "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "asked-empty"),
    )
    assert await chat.deliveries.run(spec) == "delivered"
    assert out.getvalue() == "[#1] No new commits in acme/widgets on 2026-01-26 (Asia/Shanghai).\n"


class DedupingConsole(FlakyConsole):
    """A platform that deduplicates keyed sends for an hour (as Feishu's `uuid`), whose
    `fail_at`-th send has an unknown outcome (here: it never arrived)."""

    send_dedupe_window = 3600.0


@pytest.fixture
async def timed_bot(make_settings, repo):
    now = [NOW]
    settings = make_settings(default_repo=str(repo.path), default_lang="en", catchup_minutes=60)
    services = Services.build(settings, clock=lambda: now[0])
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: now[0])
    yield chat, out, now
    await services.aclose()


@pytest.mark.parametrize(
    "later,outcome,parents",
    [
        (timedelta(minutes=10), "delivered", 1),  # inside the platform's dedupe window: sent again with its key
        (timedelta(hours=2), "uncertain", 0),  # past it: never twice, so not again
    ],
)
async def test_a_parent_whose_send_had_no_answer(timed_bot, repo, later, outcome, parents):
    chat, out, now = timed_bot
    chat.platforms["console"] = DedupingConsole(out, fail_at=1)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    with pytest.raises(RetryLater):
        await chat.deliveries.run(spec)
    now[0] = NOW + later
    uncertain = {"platform": "console", "outcome": "uncertain"}
    before = metrics.REGISTRY.get_sample_value("digestbot_deliveries_total", uncertain) or 0.0
    assert await chat.deliveries.run(spec) == outcome
    counted = metrics.REGISTRY.get_sample_value("digestbot_deliveries_total", uncertain) or 0.0
    assert counted == before + (outcome == "uncertain")
    assert out.getvalue().count("Daily update report (2026-01-28)") == parents
    assert await chat.deliveries.run(spec) == "already delivered"


@pytest.mark.parametrize(
    "later,resent",
    [
        (timedelta(minutes=55), False),  # inside the hour, but not with a 10-minute margin
        (timedelta(minutes=50), False),  # exactly the hour less the margin: no longer
        (timedelta(minutes=50) - timedelta(seconds=1), True),  # one second before: still re-sent with its key
    ],
)
async def test_a_reply_whose_send_had_no_answer_is_re_sent_only_well_inside_the_dedupe_window(
    timed_bot, repo, caplog, later, resent
):
    chat, out, now = timed_bot
    chat.platforms["console"] = DedupingConsole(out, fail_at=2)  # the first thread reply (it never arrived)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    with pytest.raises(RetryLater):
        await chat.deliveries.run(spec)
    now[0] = NOW + later
    assert await chat.deliveries.run(spec) == "delivered"
    replies = out.getvalue().split("\n  ↳ ")[1:]
    assert sum("feat!: remove export_v1" in r for r in replies) == (1 if resent else 0)  # never doubled
    assert sum("feat: add a --since flag" in r for r in replies) == 1
    assert sum("[Docs] Fix typo" in r for r in replies) == 1
    # the operator's log names a reply that was not re-sent (it may be missing), and only then
    missing = [r.getMessage() for r in caplog.records if "may be missing" in r.getMessage()]
    assert missing == ([] if resent else [missing[0]])
    assert resent or missing[0].startswith("thread message 1 of acme/widgets 2026-01-28")


@pytest.mark.parametrize(
    "attach,min_importance,day,shown",
    [
        (True, "low", DAY, 5),  # parent, three replies, the report file
        (False, "low", DAY, 4),  # parent, three replies
        (False, "high", date(2026, 1, 27), 1),  # nothing high that day: the parent alone
    ],
)
async def test_a_delivery_run_again_after_it_finished_posts_nothing_more(
    bot, repo, tmp_path, attach, min_importance, day, shown
):
    """A queued job whose worker died after the delivery but before the queue heard of it runs
    again: its progress state says everything went out, so nothing is posted twice."""
    chat, out, _settings = bot
    chat.platforms["console"] = ConsolePlatform(out=out, report_dir=tmp_path / "reports")
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(day, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "rerun"),
        min_importance=min_importance,
        attach=attach,
    )
    assert await chat.deliveries.run(spec) == "delivered"
    first = out.getvalue()
    assert first.count("[#1] Daily update report") == 1
    assert first.count("\n  ↳ ") == shown - 1 and first.count("📎") == (1 if attach else 0)
    assert await chat.deliveries.run(spec) == "delivered"
    assert out.getvalue() == first


async def test_on_demand_a_failed_build_turns_the_building_line_into_why(bot, repo, caplog):
    chat, out, _settings = bot
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        branch="nope",
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "on-demand-fails"),
        progress=True,
    )
    assert await chat.deliveries.run(spec) == "failed"
    assert out.getvalue().splitlines() == [
        "[#1] ⏳ Building the 2026-01-28 digest for acme/widgets…",
        "[#1] (updated) ⚠️ Could not build the 2026-01-28 digest for acme/widgets: No branch 'nope' in acme/widgets.",
    ]
    assert not any(r.exc_info for r in caplog.records)  # a failure we explain is not a bug: no traceback


class BrokenConsole(ConsolePlatform):
    """A platform with a bug of ours: posting a digest raises a plain exception (notices still go out)."""

    async def send(self, channel, content, *, thread=None, key=None):
        if not isinstance(content, Notice):
            raise RuntimeError("internal detail /srv/secret/path")
        return await super().send(channel, content, thread=thread, key=key)


async def test_an_unexpected_failure_is_named_by_its_kind_never_its_details(bot, repo, caplog):
    chat, out, _settings = bot
    chat.platforms["console"] = BrokenConsole(out=out)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    failed_before = (
        metrics.REGISTRY.get_sample_value("digestbot_deliveries_total", {"platform": "console", "outcome": "failed"})
        or 0.0
    )
    for _ in range(2):
        with pytest.raises(RetryLater, match=r"^failed \(RuntimeError\); will retry$"):
            await chat.deliveries.run(spec)
    assert await chat.deliveries.run(spec) == "gave up (RuntimeError)"
    assert "/srv/secret/path" not in out.getvalue() and "RuntimeError" in out.getvalue()
    assert any(r.exc_info for r in caplog.records)  # the operator's log keeps the traceback
    assert (
        metrics.REGISTRY.get_sample_value("digestbot_deliveries_total", {"platform": "console", "outcome": "failed"})
        == failed_before + 3
    )


@pytest.mark.parametrize("rebuild", ["succeeds", "fails"])
async def test_on_demand_run_again_after_it_finished_leaves_the_digest_in_place(make_settings, repo, rebuild):
    """A request re-run (its worker died after the digest went out, or Redis went away mid-thread)
    builds the digest again when it was not cached (today's, or one with notices): the building
    line has already become the digest, so no progress edit, nor a failure, may overwrite it."""
    settings = make_settings(default_repo=str(repo.path), default_lang="en", digest_cache_ttl=0)
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: NOW)
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "on-demand-rerun"),
        progress=True,
    )
    try:
        assert await chat.deliveries.run(spec) == "delivered"
        first = out.getvalue()
        if rebuild == "succeeds":
            assert await chat.deliveries.run(spec) == "delivered"
        else:
            shutil.rmtree(repo.path)  # the repository went away in between
            with pytest.raises(BotError):
                await chat.deliveries.run(spec)  # on demand: the request that asked says why
    finally:
        await services.aclose()
    assert out.getvalue() == first  # nothing edited, nothing posted twice


class UuidConsole(ConsolePlatform):
    """The terminal platform with Feishu's send dedupe: a keyed send repeated within the hour
    posts nothing and answers with the first message. Right after its `at`-th post, Redis dies."""

    send_dedupe_window = 3600.0

    def __init__(self, out, redis_proc, at: int):
        super().__init__(out=out)
        self.redis_proc, self.at, self.posts, self.seen = redis_proc, at, 0, {}

    async def send(self, channel, content, *, thread=None, key=None):
        if key in self.seen:
            return self.seen[key]
        ref = await super().send(channel, content, thread=thread, key=key)
        if key:
            self.seen[key] = ref
        self.posts += 1
        if self.posts == self.at:
            self.redis_proc.stop()
        return ref


@pytest.mark.parametrize("at", [1, 3])  # Redis dies right after the parent, or after the second reply
@pytest.mark.parametrize("kind", ["scheduled", "on demand in a job"])
async def test_redis_dying_mid_delivery_makes_the_job_run_again_and_finish_it_once(
    make_settings, repo, tmp_path, at, kind
):
    import asyncio

    from bot.core.current_job import CURRENT_JOB
    from tests.shared.redis_proc import RedisProcess, free_port

    redis_proc = RedisProcess(free_port(), tmp_path, durable=True)  # a restart loses nothing acknowledged
    redis_proc.start()
    settings = make_settings(
        default_repo=str(repo.path), default_lang="en", job_lease=1, redis_url=f"redis://127.0.0.1:{redis_proc.port}/0"
    )
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": UuidConsole(out, redis_proc, at)}, clock=lambda: NOW)
    if kind == "scheduled":
        spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    else:
        spec = DeliverySpec(
            platform="console",
            channel="console",
            repo=str(repo.path),
            window=to_dict(day_window(DAY, "Asia/Shanghai")),
            lang="en",
            key=chat.store.k("delivery", "job-1"),
        )
    token = CURRENT_JOB.set("deliver:job-1" if kind != "scheduled" else None)
    try:
        with pytest.raises(RetryLater, match=r"^storage unavailable$"):  # the job runs again, undecided
            await chat.deliveries.run(spec)
        redis_proc.start()
        for _ in range(200):  # the dead run's lock lapses after its lease (JOB_LEASE = 1 s)
            if not await chat.store.r.exists(spec.key + ":lock"):
                break
            await asyncio.sleep(0.05)
        assert await chat.deliveries.run(spec) == "delivered"
    finally:
        CURRENT_JOB.reset(token)
        await services.aclose()
        redis_proc.stop()
    shown = out.getvalue()
    assert shown.count("Daily update report (2026-01-28)") == 1
    replies = shown.split("\n  ↳ ")[1:]
    assert [
        sum(title in r for r in replies)
        for title in ("feat!: remove export_v1", "feat: add a --since flag", "[Docs] Fix typo")
    ] == [1, 1, 1]


async def test_on_demand_progress_is_edited_at_most_every_one_and_a_half_seconds(make_settings, tmp_path):
    r = GitRepo(tmp_path / "busy")
    bulk_commits(r, 7, datetime(2026, 1, 28, 9, tzinfo=SH), files=2)
    settings = make_settings(default_repo=str(r.path), default_lang="en")
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: NOW)
    ticks = iter(range(1, 100))
    chat.deliveries.monotonic = lambda: 0.5 * next(ticks)  # each progress report half a second after the last
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(r.path),
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "paced"),
        progress=True,
    )
    try:
        assert await chat.deliveries.run(spec) == "delivered"
    finally:
        await services.aclose()
    edits = [line for line in out.getvalue().splitlines() if line.startswith("[#1] (updated) ⏳")]
    # reports at 0.5, 1.0, … 4.0 s (0/7 … 7/7 done): shown at once, then once 1.5 s have passed
    assert [e.split("analysing ")[1] for e in edits] == ["0/7 commits…", "3/7 commits…", "6/7 commits…"]


async def test_on_demand_an_empty_day_shows_no_progress(bot, repo):
    chat, out, _settings = bot
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(date(2026, 1, 26), "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "empty-progress"),
        progress=True,
    )
    assert await chat.deliveries.run(spec) == "delivered"
    assert out.getvalue().splitlines() == [
        "[#1] ⏳ Building the 2026-01-26 digest for acme/widgets…",
        "[#1] (updated) No new commits in acme/widgets on 2026-01-26 (Asia/Shanghai).",
    ]


class HeldConsole(ConsolePlatform):
    """The terminal platform whose first post waits until the test lets it go: a slow delivery."""

    def __init__(self, out):
        import asyncio

        super().__init__(out=out)
        self.entered, self.go = asyncio.Event(), asyncio.Event()

    async def send(self, channel, content, *, thread=None, key=None):
        if not self.go.is_set():
            self.entered.set()
            await self.go.wait()
        return await super().send(channel, content, thread=thread, key=key)


def held_delivery(make_settings, repo):
    """A one-second lease and a terminal platform that holds the first post: (settings, services,
    chat, platform, out, spec)."""
    settings = make_settings(default_repo=str(repo.path), default_lang="en", job_lease=1)
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    platform = HeldConsole(out)
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    spec = scheduled_spec(chat.store, Subscription("console", "console", str(repo.path), lang="en"), DAY)
    return settings, services, chat, platform, out, spec


async def test_a_delivery_slower_than_its_lease_keeps_its_lock(make_settings, repo):
    import asyncio
    import time

    settings, services, chat, platform, out, spec = held_delivery(make_settings, repo)
    try:
        first = asyncio.create_task(chat.deliveries.run(spec))
        await asyncio.wait_for(platform.entered.wait(), 60)
        # three leases go by while the first runner is held: its lock is renewed all along
        until = time.monotonic() + 3 * settings.job_lease
        while time.monotonic() < until:
            assert await chat.store.r.exists(spec.key + ":lock")
            await asyncio.sleep(0.1)
        with pytest.raises(RetryLater, match="another worker is delivering"):
            await chat.deliveries.run(spec)
        platform.go.set()
        assert await first == "delivered"
    finally:
        await services.aclose()
    assert out.getvalue().count("Daily update report (2026-01-28)") == 1


async def test_a_runner_whose_lock_was_taken_over_stops_before_sending(make_settings, repo):
    """A stalled runner's lease lapses and another runner takes the delivery: the first one must
    not post anything more (the new holder resumes it), and it is told to retry later."""
    import asyncio

    _, services, chat, platform, out, spec = held_delivery(make_settings, repo)
    try:
        first = asyncio.create_task(chat.deliveries.run(spec))
        await asyncio.wait_for(platform.entered.wait(), 60)
        await chat.store.r.set(spec.key + ":lock", "another-runner", ex=30)  # the lapse and the take-over
        with pytest.raises(RetryLater, match="took the delivery over"):
            await asyncio.wait_for(first, 30)
        platform.go.set()
        assert await chat.store.r.get(spec.key + ":lock") == b"another-runner"  # not released by the loser
        assert await chat.store.get_json(spec.ledger) is None  # not marked delivered by the loser
    finally:
        await services.aclose()
    assert "Daily update report (2026-01-28)" not in out.getvalue()


class UpdateFailsOnceConsole(ConsolePlatform):
    """The terminal platform whose first edit of a message into a digest fails (a platform outage)."""

    failed = False

    async def update(self, ref, content):
        if not isinstance(content, Notice) and not self.failed:
            self.failed = True
            raise BotError("the chat platform is down")
        return await super().update(ref, content)


async def test_on_demand_re_run_after_an_outage_turns_the_same_building_line_into_the_digest(bot, repo):
    chat, out, _settings = bot
    chat.platforms["console"] = UpdateFailsOnceConsole(out=out)
    spec = DeliverySpec(
        platform="console",
        channel="console",
        repo=str(repo.path),
        window=to_dict(day_window(DAY, "Asia/Shanghai")),
        lang="en",
        key=chat.store.k("delivery", "on-demand-outage"),
        progress=True,
    )
    with pytest.raises(BotError, match="the chat platform is down"):
        await chat.deliveries.run(spec)  # on demand: the request that asked says so, and runs again
    assert await chat.deliveries.run(spec) == "delivered"
    top = [line for line in out.getvalue().splitlines() if line.startswith("[#")]
    assert top[0] == "[#1] ⏳ Building the 2026-01-28 digest for acme/widgets…"
    assert all(line.startswith("[#1]") for line in top)  # one message, edited: no second building line or parent
    assert top[-1].startswith("[#1] (updated) Daily update report (2026-01-28)")
    assert out.getvalue().count("\n  ↳ [#") == 3 and "in #1]" in out.getvalue()


async def test_a_subscriptions_every_setting_reaches_its_scheduled_delivery_and_survives_the_queue(make_settings):
    """The one subscription → delivery mapping (bot/delivery/spec.py): what a channel set with
    `subscribe` is what its push is built with, also after the spec crossed the job queue as JSON."""
    services = Services.build(make_settings())
    store = services.store
    sub = Subscription(
        "slack",
        "C1",
        "astral-sh/uv",
        tz="UTC",
        lang="en",
        min_importance=Importance.MEDIUM,
        branch="release",
        post_empty=False,
        paths=("crates/**",),
        exclude=("**/*.md",),
        bots="show",
        fork="us/uv-fork@main",
        owner="U42",
    )
    spec = DeliverySpec.from_dict(to_dict(scheduled_spec(store, sub, date(2026, 1, 28))))
    assert (spec.lang, spec.min_importance, spec.branch, spec.post_empty) == ("en", "medium", "release", False)
    assert (spec.paths, spec.exclude, spec.bots) == (("crates/**",), ("**/*.md",), "show")
    assert (spec.fork, spec.owner, spec.week) == ("us/uv-fork@main", "U42", False)
    assert spec.ledger and spec.attempts and spec.key != spec.ledger
    plain = scheduled_spec(store, Subscription("slack", "C1", "astral-sh/uv", tz="UTC"), date(2026, 1, 28))
    assert (plain.bots, plain.owner, plain.paths) == ("collapse", None, ())
    await services.aclose()
