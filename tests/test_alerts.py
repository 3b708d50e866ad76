"""Alerts (issue 27, item 4), end to end: `subscribe owner/repo alerts high` typed into the real
Slack adapter (signed slash commands; the fake Slack Web API), commits landing in a real git
repository, the clock's alert polls (inline, and as the queue's "alert" jobs), a verified GitHub
push webhook waking a poll, what the channel then reads (each new high commit once, on its own;
the hour's cap and its one counting message; the next digest's "alerted" marks), restarts and
killed polls over the same Redis, the analyses shared with the digests (the fake LLM is asked
nothing twice), one Feishu group, and bad input.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlencode

import aiohttp
import pytest
from pydantic import SecretStr

from bot.core.window import day_window
from bot.render import slack as R
from bot.render.jsonout import digest_data
from bot.runtime.app import App
from bot.runtime.queue import Jobs, JobWorker
from bot.runtime.services import Services
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, github_webhook_routes, gitlab_webhook_routes, start_server
from tests.fakes.github_server import FakeFile
from tests.fakes.openai_server import FakeOpenAI, Reply, analysis_json, commit_facts, default_responder
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo
from tests.shared.slack import FAST, SECRET, Bot, build_widgets, shown, shown_eph

T0 = datetime(2026, 1, 29, 2, 0, tzinfo=UTC)  # 10:00 on the 29th in Shanghai; the widgets' history is the 28th
CHANNEL = "C0001"
HOOK_SECRET = "hook-secret-for-tests"
GITLAB_SECRET = "gitlab-hook-token-for-tests"
PERIOD = 600.0


@dataclass
class Time:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def widgets(tmp_path):
    return build_widgets(tmp_path / "widgets", date(2026, 1, 28))


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def grades(request: dict) -> Reply:
    """The fake LLM's analysis, high for the wire-format breaks (the default answers medium)."""
    title, path = commit_facts(request)
    if "wire format" in title and '"bullets"' not in str(request["messages"][0]["content"]):
        return Reply(
            content=analysis_json(
                importance="high", importance_reason="Old clients stop working.", summary=f"Drops a format in {path}."
            )
        )
    return default_responder(request)


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        fake.responder = grades
        yield fake


@pytest.fixture
def time_():
    return Time()


@pytest.fixture
async def make_bot(make_settings, slack, widgets, llm, time_):
    bots: list[Bot] = []

    async def build(**overrides) -> Bot:
        values = dict(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            openai_base_url=llm.url,
            openai_api_key="sk-test-alerts",
            alert_poll_seconds=PERIOD,
        )
        values.update(overrides)
        settings = make_settings(**values)
        services = Services.build(settings, clock=time_)
        chat = App.build(services, clock=time_)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        routes = adapter.http_routes() + github_webhook_routes(HOOK_SECRET, chat.wake_alerts)
        routes += gitlab_webhook_routes(GITLAB_SECRET, chat.wake_alerts)
        runner = await start_server(build_app(services.store, routes), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        bots.append(bot)
        return bot

    yield build
    for bot in bots:
        await bot.close()


async def command(bot: Bot, text: str, channel: str = CHANNEL) -> None:
    status, _ = await bot.sender.slash(text, channel=channel)
    assert status == 200
    await bot.settle()


async def poll(bot: Bot, now: datetime) -> list[str]:
    """One clock pass over the alerting subscriptions at `now` (inline: no job queue)."""
    return [o for _, o in await bot.chat.make_clock(now=lambda: now).tick_alerts(now)]


def land(repo: GitRepo, kind: str, when: datetime, n: int = 0) -> str:
    if kind == "high":
        return repo.commit(
            f"feat!: drop the v{n} wire format\n\nBREAKING CHANGE: clients on v{n} must upgrade.",
            {f"src/wire_{n}.py": f"VERSION = {n + 2}\n"},
            when=when,
        )
    if kind == "medium":
        return repo.commit(
            "feat: add --limit flag",
            {"src/cli.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--limit')\n"},
            when=when,
        )
    return repo.commit(f"docs: typo {n}", {"README.md": f"hi {n}\n"}, when=when)


def analyses_asked(fake: FakeOpenAI, since: int = 0) -> int:
    return sum(1 for r in fake.requests[since:] if '"bullets"' not in r["messages"][0]["content"])


def texts(slack: FakeSlack, channel: str = CHANNEL) -> list[str]:
    return [R.unescape(shown(m)) for m in slack.top_level(channel)]


def signed(body: bytes, secret: str = HOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def hook(
    bot: Bot, payload: dict, *, event: str = "push", signature: str | None = "good", form: bool = False
) -> tuple[int, str]:
    """Deliver `payload` as GitHub does: JSON, or (`form`) the form field `payload`, GitHub's
    default content type; signed over the raw body either way."""
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "Content-Type": "application/json"}
    if form:
        body = urlencode({"payload": body.decode()}).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if signature == "good":
        headers["X-Hub-Signature-256"] = signed(body)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    url = f"http://127.0.0.1:{bound_port(bot.runner)}/github/webhook"
    async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as resp:
        return resp.status, await resp.text()


# --- the alerts ---------------------------------------------------------------------------------------


async def test_a_new_high_commit_is_posted_once_within_a_poll_and_never_again(make_bot, slack, llm, widgets, time_):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    (confirmation,) = texts(slack)
    assert "alerts: each new high-importance commit posted as it lands" in confirmation

    # The first poll: the history before `alerts high` (a high commit on the 28th) is never alerted.
    assert await poll(bot, T0 + timedelta(minutes=1)) == ["nothing new"]
    assert len(slack.top_level(CHANNEL)) == 1 and analyses_asked(llm) == 0

    high = land(widgets, "high", T0 + timedelta(minutes=3))
    land(widgets, "medium", T0 + timedelta(minutes=4))
    land(widgets, "low", T0 + timedelta(minutes=5))
    time_.now = T0 + timedelta(minutes=12)
    assert await poll(bot, time_.now) == ["sent 1"]
    _, alert = slack.top_level(CHANNEL)
    assert "feat!: drop the v0 wire format" in R.unescape(shown(alert))
    assert "🔴" in shown(alert) and "add --limit flag" not in slack.all_text() and "typo" not in slack.all_text()
    assert analyses_asked(llm) == 3  # each new commit analysed once, through the digests' cache

    # The same period again, the next one, and a restart over the same Redis: nothing more.
    assert await poll(bot, time_.now) == ["already done"]
    time_.now = T0 + timedelta(minutes=22)
    assert await poll(bot, time_.now) == ["nothing new"]
    restarted = await make_bot()
    time_.now = T0 + timedelta(minutes=32)
    assert await poll(restarted, time_.now) == ["nothing new"]
    assert len(slack.top_level(CHANNEL)) == 2 and analyses_asked(llm) == 3

    # A question in the alert's thread is about its commit, like a digest thread's.
    event = bot.sender.message_event(
        f"<@{slack.bot_user_id}> what could this break?", channel=CHANNEL, thread_ts=alert.ts
    )
    asked = len(llm.requests)
    assert (await bot.sender.event(event))[0] == 200
    await bot.settle()
    assert slack.replies(CHANNEL, alert.ts)
    question = json.dumps(llm.requests[asked:], ensure_ascii=False)  # the model was asked about that commit
    assert "what could this break?" in question and "drop the v0 wire format" in question

    # The next daily digest: the alerted commit marked so, and no commit analysed a second time.
    asked = len(llm.requests)
    (sub,) = await bot.chat.subs.all()
    time_.now = T0 + timedelta(days=1)
    await bot.chat.deliver_subscription(sub, day_window(date(2026, 1, 29), "Asia/Shanghai"), "progress:t1")
    parent = slack.top_level(CHANNEL)[-1]
    replies = slack.replies(CHANNEL, parent.ts)
    marked = [R.unescape(shown(m)) for m in (parent, *replies) if "🔔 alerted" in shown(m)]
    assert len(marked) == 2, marked  # the parent's high line and the commit's own reply
    assert all("drop the v0 wire format" in m for m in marked)
    assert "🔔 alerted" not in "".join(R.unescape(shown(m)) for m in replies if "--limit" in shown(m))
    assert analyses_asked(llm, asked) == 0
    digest = await bot.services.builder.build(
        bot.services.source(sub.repo), day_window(date(2026, 1, 29), "Asia/Shanghai"), "en"
    )
    assert not any(e.alerted for e in digest.entries)  # the cached digest holds no conversation's marks
    marked_copy = await bot.chat.alert_runner.ledger.marked("slack", CHANNEL, sub.repo, digest)
    data = digest_data(marked_copy)  # the JSON of this conversation's copy says so
    assert [e["commit"]["sha"] for e in data["entries"] if e.get("alerted")] == [high]
    assert all("alerted" not in e for e in data["entries"] if e["commit"]["sha"] != high)


async def test_the_seventh_high_commit_of_an_hour_is_counted_in_one_message(make_bot, slack, widgets, time_):
    bot = await make_bot(alert_max_per_hour=5)
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    for n in range(7):
        land(widgets, "high", T0 + timedelta(minutes=1, seconds=n), n)
    time_.now = T0 + timedelta(minutes=11)
    assert await poll(bot, time_.now) == ["sent 5, counted 2 more, count told"]
    top = texts(slack)[1:]
    assert len(top) == 6
    assert [n for n in range(7) if any(f"drop the v{n} wire format" in t for t in top)] == [0, 1, 2, 3, 4]
    assert top[-1] == (
        "🔔 acme/widgets: 2 more high-importance commits landed this hour, over the limit of 5 alerts an hour; "
        "see the next digest."
    )
    # Two more in the same hour: the one counting message is edited, nothing new is posted.
    land(widgets, "high", T0 + timedelta(minutes=15), 7)
    land(widgets, "high", T0 + timedelta(minutes=16), 8)
    time_.now = T0 + timedelta(minutes=21)
    assert await poll(bot, time_.now) == ["counted 2 more, count told"]
    assert len(slack.top_level(CHANNEL)) == 7
    assert "4 more high-importance commits" in R.unescape(shown(slack.top_level(CHANNEL)[-1]))
    # The next hour starts a new count.
    land(widgets, "high", T0 + timedelta(hours=1, minutes=2), 9)
    time_.now = T0 + timedelta(hours=1, minutes=5)
    assert await poll(bot, time_.now) == ["sent 1"]
    assert "drop the v9 wire format" in texts(slack)[-1]


async def test_subscribing_again_while_alerts_are_on_keeps_their_place(make_bot, slack, widgets, time_):
    """Editing the subscription (`at 08:00`, the same `alerts high`) does not restart alerts from
    now: a high commit that landed before the edit is still alerted by the next poll."""
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    land(widgets, "high", T0 + timedelta(minutes=2), 3)
    time_.now = T0 + timedelta(minutes=5)
    await command(bot, "subscribe acme/widgets at 08:00 alerts high")
    time_.now = T0 + timedelta(minutes=11)
    assert await poll(bot, time_.now) == ["sent 1"]
    assert "drop the v3 wire format" in texts(slack)[-1]


async def test_a_poll_that_keeps_failing_is_retried_then_closed_and_the_next_period_polls_again(
    make_bot, slack, widgets, time_
):
    """A subscription alerting on a branch that is gone: its poll fails, is retried twice, then is
    closed for that period; the next period polls again, and once the
    branch is back its high commit is alerted."""
    bot = await make_bot()
    widgets.git("branch", "release")
    await command(bot, "subscribe acme/widgets branch release alerts high")
    assert await poll(bot, T0) == ["nothing new"]
    widgets.git("branch", "-D", "release")  # the branch is gone
    time_.now = T0 + timedelta(minutes=11)
    first = await poll(bot, time_.now)
    second = await poll(bot, time_.now)
    assert all(o.startswith("failed (") and o.endswith("; will retry") for o in first + second)
    assert "release" in first[0]
    (closed,) = await poll(bot, time_.now)
    assert closed.startswith("gave up (") and "release" in closed
    assert await poll(bot, time_.now) == ["already done"]  # closed for this period
    assert len(slack.top_level(CHANNEL)) == 1  # nothing posted meanwhile (the confirmation only)

    land(widgets, "high", T0 + timedelta(minutes=12), 4)
    widgets.git("branch", "release")  # back, with a high commit on it
    time_.now = T0 + timedelta(minutes=21)
    assert await poll(bot, time_.now) == ["sent 1"]
    assert "drop the v4 wire format" in texts(slack)[-1]


async def test_alerts_off_stops_them_and_on_again_starts_from_then(make_bot, slack, widgets, time_):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    await command(bot, "subscribe acme/widgets alerts off")
    assert "alerts:" not in texts(slack)[-1]
    land(widgets, "high", T0 + timedelta(minutes=2), 1)
    time_.now = T0 + timedelta(minutes=11)
    assert await poll(bot, time_.now) == []  # no subscription alerts: nothing polled
    assert not any("wire format" in t for t in texts(slack))
    time_.now = T0 + timedelta(minutes=20)
    await command(bot, "subscribe acme/widgets alerts high")  # the commit from while they were off stays quiet
    land(widgets, "high", T0 + timedelta(minutes=23), 2)
    time_.now = T0 + timedelta(minutes=31)
    assert await poll(bot, time_.now) == ["sent 1"]
    assert [t for t in texts(slack) if "wire format" in t] == [texts(slack)[-1]]
    assert "drop the v2 wire format" in texts(slack)[-1]
    await command(bot, "list")
    listing = texts(slack)[-1] if "wire format" not in texts(slack)[-1] else shown_eph(slack.ephemerals[-1])
    assert "daily at" in listing and "alerts: each new high-importance commit" in listing


async def test_a_push_of_commits_made_long_before_it_is_alerted_and_a_rewritten_branch_still_is(
    make_bot, slack, widgets, time_
):
    """A developer commits at 10:05 and pushes at 11:10: the commit is new to the branch though its
    date is an hour behind the last poll, so the poll, reading what the branch gained since the
    head it last saw, posts it. After a force-push the poll reads by date again."""
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    assert await poll(bot, T0 + timedelta(minutes=1)) == ["nothing new"]  # reads the branch's head
    time_.now = T0 + timedelta(minutes=60)
    assert await poll(bot, time_.now) == ["nothing new"]

    base = widgets.git("rev-parse", "HEAD").strip()
    late = land(widgets, "high", T0 + timedelta(minutes=5), 1)  # made at 10:05, pushed now
    time_.now = T0 + timedelta(minutes=70)
    assert await poll(bot, time_.now) == ["sent 1"]
    assert "drop the v1 wire format" in texts(slack)[-1]
    time_.now = T0 + timedelta(minutes=80)
    assert await poll(bot, time_.now) == ["nothing new"]

    widgets.git("reset", "--hard", base)  # the branch rewritten: the last head is not on it any more
    land(widgets, "high", T0 + timedelta(minutes=85), 2)
    time_.now = T0 + timedelta(minutes=90)
    assert await poll(bot, time_.now) == ["sent 1"]
    alerts = [t for t in texts(slack) if "wire format" in t]
    assert len(alerts) == 2 and "drop the v2 wire format" in alerts[-1] and late[:7] in alerts[0]


async def test_a_poll_killed_after_the_send_does_not_post_it_again(make_bot, slack, widgets, time_):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    store = bot.services.store
    runner = bot.chat.alert_runner
    (sub,) = await bot.chat.subs.all()
    cursor = await store.get_json(runner.ledger.since_key("slack", CHANNEL, sub.repo))
    high = land(widgets, "high", T0 + timedelta(minutes=2))
    time_.now = T0 + timedelta(minutes=11)
    assert await poll(bot, time_.now) == ["sent 1"]
    alert = slack.top_level(CHANNEL)[-1]
    # Make Redis look as a poll killed right after Slack accepted the alert leaves it: the send was
    # being tried (its "trying" state), Slack's own marker not yet holding the message's ts, the
    # poll not finished (no ledger, the cursor where the poll before left it).
    await store.set_json(runner.ledger.since_key("slack", CHANNEL, sub.repo), cursor)
    key = runner.ledger.sent_key("slack", CHANNEL, sub.repo, high)
    assert (await store.get_json(key))["id"] == alert.ts
    await store.set_json(key, {"at": time_.now.timestamp(), "alerted": True})
    await store.set_json(store.k("slack", "sent", key), {"pending": True})
    for k in await store.r.keys(store.k("alertpoll", "*")):
        await store.delete(k.decode())
    assert await poll(bot, time_.now) == ["sent 1"]  # run again: it resumes the alert…
    assert len(slack.top_level(CHANNEL)) == 2  # …which Slack already has: found by its key, not posted twice
    assert slack.calls_to("conversations.history")
    assert (await store.get_json(key))["done"] is True
    assert await poll(bot, time_.now) == ["already done"]


async def test_the_clock_queues_an_alert_job_that_a_worker_runs(make_bot, slack, widgets, time_):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    land(widgets, "high", T0 + timedelta(minutes=2))
    settings = bot.chat.settings
    jobs = await Jobs.connect(settings)
    bot.chat.jobs = jobs
    worker = JobWorker(settings, bot.chat)
    try:
        time_.now = T0 + timedelta(minutes=11)
        clock = bot.chat.make_clock(now=time_, jobs=jobs)
        assert [o for _, o in await clock.tick_alerts(time_.now)] == ["queued"]
        assert [o for _, o in await clock.tick_alerts(time_.now)] == ["already queued"]
        assert len(slack.top_level(CHANNEL)) == 1
        await worker.start()
        bot.chat.worker = worker
        await bot.chat.drain()
        assert "drop the v0 wire format" in texts(slack)[-1]
        assert [o for _, o in await clock.tick_alerts(time_.now)] == ["already done"]
    finally:
        bot.chat.worker = None
        await worker.close()
        await jobs.close()


# --- the GitHub push webhook ------------------------------------------------------------------------


async def test_a_signed_push_wakes_the_poll_and_unsigned_ones_are_refused(make_bot, slack, widgets, time_, caplog):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    land(widgets, "high", T0 + timedelta(minutes=2))
    time_.now = T0 + timedelta(minutes=3)  # well inside the period: only the push makes it poll now
    push = {"ref": "refs/heads/main", "repository": {"full_name": "ACME/Widgets"}}

    for signature in (None, "sha256=" + "0" * 64, signed(json.dumps(push).encode(), "wrong-secret"), "md5=abc"):
        status, body = await hook(bot, push, signature=signature)
        assert status == 401 and len(body) < 40 and "Traceback" not in body
    await bot.settle()
    assert len(slack.top_level(CHANNEL)) == 1  # refused: nothing polled, nothing posted
    assert HOOK_SECRET not in caplog.text

    assert (await hook(bot, {"zen": "hi"}, event="ping"))[0] == 200
    assert (await hook(bot, push, event="issues"))[0] == 204
    assert (await hook(bot, {"repository": {"full_name": "other/repo"}}))[0] == 202
    await bot.settle()
    assert len(slack.top_level(CHANNEL)) == 1

    status, body = await hook(bot, push)
    assert status == 202 and json.loads(body)["polls"] == 1
    assert (await hook(bot, push))[0] == 202  # a burst of pushes: one poll
    await bot.settle()
    assert [t for t in texts(slack) if "wire format" in t] == [texts(slack)[-1]]
    assert "drop the v0 wire format" in texts(slack)[-1]
    time_.now = T0 + timedelta(minutes=11)
    assert await poll(bot, time_.now) == ["nothing new"]  # the clock's poll finds it already sent


async def test_a_form_encoded_push_is_read_too(make_bot, slack, widgets, time_):
    """GitHub's webhook form offers application/x-www-form-urlencoded first: the JSON is then the
    `payload` field, and the signature covers the encoded body."""
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    land(widgets, "high", T0 + timedelta(minutes=2))
    time_.now = T0 + timedelta(minutes=3)
    push = {"ref": "refs/heads/main", "repository": {"full_name": "acme/widgets"}}
    forged = signed(json.dumps(push).encode())  # the JSON's signature, not the body's
    assert (await hook(bot, push, form=True, signature=forged))[0] == 401
    status, body = await hook(bot, push, form=True)
    assert status == 202 and json.loads(body)["polls"] == 1
    await bot.settle()
    assert "drop the v0 wire format" in texts(slack)[-1]


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lang,sentence,usage",
    [
        ("en", "⚠️ alerts must be high or off, not 'loud'.", "Usage: `/digest subscribe owner/repo"),
        ("zh", "alerts", "用法：`/digest subscribe owner/repo"),
    ],
)
async def test_alerts_loud_is_one_sentence_and_the_usage(make_bot, slack, lang, sentence, usage):
    bot = await make_bot(default_lang=lang)
    await command(bot, "subscribe acme/widgets alerts loud")
    (reply,) = slack.ephemerals
    line = R.unescape(shown_eph(reply))
    assert line.startswith("⚠️") and sentence in line and usage in line and "loud" in line, line
    assert len(line.splitlines()) == 2
    assert await bot.chat.subs.all() == []


def test_a_subscriptions_file_takes_alerts(tmp_path, make_settings):
    from bot.channels.subscriptions import load_subscription_file
    from bot.core.models import UsageError

    path = tmp_path / "subscriptions.toml"
    path.write_text('[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "acme/widgets"\nalerts = "high"\n')
    (sub,) = load_subscription_file(path, make_settings())
    assert sub.alerts == "high"
    path.write_text('[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "acme/widgets"\nalerts = "loud"\n')
    with pytest.raises(UsageError) as caught:
        load_subscription_file(path, make_settings())
    assert "alerts must be one of high, off" in str(caught.value)


@pytest.mark.parametrize(
    "name,value", [("alert_poll_seconds", "0"), ("alert_max_per_hour", "0"), ("alert_max_per_hour", "many")]
)
def test_bad_alert_settings_are_one_sentence(name, value):
    from settings import ConfigError, load_settings

    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None, **{name: value})
    message = str(caught.value)
    assert name.upper() in message and "\n" not in message and "Traceback" not in message


# --- Feishu ----------------------------------------------------------------------------------------


async def test_an_alert_in_a_feishu_group(make_settings, tmp_path):
    from tests.shared.feishu import GROUP, feishu_env

    repo = GitRepo(tmp_path / "rocket")
    repo.commit("init", {"README.md": "hi\n"}, when=T0 - timedelta(days=1))
    async with feishu_env(make_settings, repo, default_lang="zh") as env:
        env.chat.clock = lambda: T0
        await env.say(f"subscribe {repo.path} alerts high")
        await env.settle()
        assert "即时提醒" in env.fake.text_of(env.fake.messages[-1])
        posted = len(env.fake.messages)
        await env.say(f"subscribe {repo.path} alerts loud")
        await env.settle()
        (refusal,) = env.fake.ephemerals
        said = json.dumps(refusal, ensure_ascii=False)
        assert "alerts" in said and "loud" in said and "用法" in said
        assert len(env.fake.messages) == posted
        land(repo, "high", T0 + timedelta(minutes=2))
        land(repo, "low", T0 + timedelta(minutes=3))
        now = T0 + timedelta(minutes=11)
        env.chat.clock = lambda: now
        outcomes = [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)]
        assert outcomes == ["sent 1"]
        top = [env.fake.text_of(m) for m in env.fake.top_level(GROUP)]
        assert "drop the v0 wire format" in top[-1] and not any("typo" in t for t in top)
        assert [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)] == ["already done"]
        assert len(env.fake.top_level(GROUP)) == len(top)


async def test_a_feishu_alert_tried_over_an_hour_ago_is_looked_up_before_it_is_sent(make_settings, tmp_path):
    """A poll killed while sending, run again after Feishu forgot the send's `uuid` (an hour): the
    bot reads the group back. The alert that reached Feishu is found and not posted again; the one
    that never did is posted, once."""
    from tests.shared.feishu import GROUP, feishu_env

    repo = GitRepo(tmp_path / "rocket")
    repo.commit("init", {"README.md": "hi\n"}, when=T0 - timedelta(days=1))
    async with feishu_env(make_settings, repo, default_lang="zh") as env:
        env.chat.clock = lambda: T0
        await env.say(f"subscribe {repo.path} alerts high")
        await env.settle()
        store = env.chat.store
        runner = env.chat.alert_runner
        (sub,) = await env.chat.subs.all()
        cursor_key = runner.ledger.since_key("feishu", GROUP, sub.repo)
        cursor = await store.get_json(cursor_key)
        reached = land(repo, "high", T0 + timedelta(minutes=2), 1)
        lost = land(repo, "high", T0 + timedelta(minutes=3), 2)
        now = T0 + timedelta(minutes=11)
        env.chat.clock = lambda: now
        assert [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)] == ["sent 2"]
        before = [env.fake.text_of(m) for m in env.fake.top_level(GROUP)]
        lost_ref = (await store.get_json(runner.ledger.sent_key("feishu", GROUP, sub.repo, lost)))["id"]
        env.fake.drop_message(lost_ref)  # as if its send never reached Feishu
        env.fake.advance(2 * 3600)  # and Feishu forgot the sends' uuids
        env.fake.scopes["im:message.group_msg"] = 1  # the bot may read the group back

        # Redis as the killed poll left it, two hours ago: both sends "trying", the cursor unmoved.
        tried = (now - timedelta(hours=2)).timestamp()
        for sha in (reached, lost):
            await store.set_json(runner.ledger.sent_key("feishu", GROUP, sub.repo, sha), {"at": tried, "alerted": True})
        await store.set_json(cursor_key, cursor)
        for k in await store.r.keys(store.k("alertpoll", "*")):
            await store.delete(k.decode())
        assert [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)] == ["sent 2"]
        after = [env.fake.text_of(m) for m in env.fake.top_level(GROUP)]
        assert sum("drop the v1 wire format" in t for t in after) == 1  # found in the group: not again
        assert sum("drop the v2 wire format" in t for t in after) == 1  # never arrived: posted, once
        assert len(after) == len(before)


async def test_a_feishu_alert_whose_send_went_unanswered_is_found_hours_later_not_posted_again(make_settings, tmp_path):
    """Feishu takes the alert but its answers are lost: the poll fails with the send's "trying"
    state recorded. Re-run within the hour, the same `uuid` is sent (Feishu dedupes it, nothing is
    read back); re-run hours later, the group is read back and the alert found, not posted twice."""
    from tests.shared.feishu import GROUP, feishu_env

    repo = GitRepo(tmp_path / "rocket")
    repo.commit("init", {"README.md": "hi\n"}, when=T0 - timedelta(days=1))
    async with feishu_env(make_settings, repo, default_lang="zh") as env:
        env.fake.scopes["im:message.group_msg"] = 1
        env.adapter.api.max_transient = 2
        env.chat.clock = lambda: T0
        await env.say(f"subscribe {repo.path} alerts high")
        await env.settle()
        land(repo, "high", T0 + timedelta(minutes=2), 1)
        now = T0 + timedelta(minutes=11)
        env.chat.clock = lambda: now

        def tick() -> list[str]:
            return env.chat.make_clock(now=lambda: now).tick_alerts(now)

        env.fake.lose(2, path="/open-apis/im/v1/messages")  # taken, but both answers lost
        (outcome,) = [o for _, o in await tick()]
        assert outcome.startswith("failed (") and outcome.endswith("will retry")
        alerts = [m for m in env.fake.top_level(GROUP) if "drop the v1 wire format" in env.fake.text_of(m)]
        assert len(alerts) == 1  # it reached the group

        reads = len(env.fake.api_calls("/open-apis/im/v1/messages", method="GET"))
        now = T0 + timedelta(minutes=12)  # within Feishu's hour: the same uuid, deduplicated
        assert [o for _, o in await tick()] == ["sent 1"]
        assert len(env.fake.api_calls("/open-apis/im/v1/messages", method="GET")) == reads  # nothing read back
        assert sum("drop the v1 wire format" in env.fake.text_of(m) for m in env.fake.top_level(GROUP)) == 1

        # The same again, re-run hours later.
        land(repo, "high", T0 + timedelta(minutes=30), 2)
        now = T0 + timedelta(minutes=41)
        env.chat.clock = lambda: now
        env.fake.lose(2, path="/open-apis/im/v1/messages")
        (outcome,) = [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)]
        assert outcome.endswith("will retry")
        env.fake.advance(3 * 3600)  # Feishu forgot the uuid
        now = T0 + timedelta(hours=3)
        env.chat.clock = lambda: now
        assert [o for _, o in await env.chat.make_clock(now=lambda: now).tick_alerts(now)] == ["sent 1"]
        assert len(env.fake.api_calls("/open-apis/im/v1/messages", method="GET")) > reads  # read back
        assert sum("drop the v2 wire format" in env.fake.text_of(m) for m in env.fake.top_level(GROUP)) == 1


# --- the "alerted" mark on every surface ------------------------------------------------------------


@pytest.mark.parametrize("lang,mark", [("en", "🔔 alerted"), ("zh", "🔔 已提醒")])
def test_every_surface_marks_an_alerted_commit_and_only_it(lang, mark):
    from dataclasses import replace

    from bot.core.chat_platform import CommitDetail, DigestParent
    from bot.render.feishu import render_cards
    from bot.render.jsonout import render_json
    from bot.render.markdown import render_report
    from bot.render.text import render_text
    from tests.shared.feishu import code_heavy_digest

    base, entry = code_heavy_digest()
    for alerted in (True, False):
        d = replace(base, lang=lang, entries=(replace(entry, alerted=alerted),))
        e = d.entries[0]
        seen = {
            "slack parent": "\n".join(R.unescape(x) for b in R.render(DigestParent(d)) for x in R.plain_texts(b)),
            "slack reply": "\n".join(R.unescape(x) for b in R.render(CommitDetail(d, e)) for x in R.plain_texts(b)),
            "feishu parent": json.dumps(render_cards(DigestParent(d), lang=lang), ensure_ascii=False),
            "feishu reply": json.dumps(render_cards(CommitDetail(d, e), lang=lang), ensure_ascii=False),
            "terminal": render_text(DigestParent(d)),
            "markdown": render_report([d]),
        }
        for surface, shown_there in seen.items():
            assert (mark in shown_there) is alerted, (surface, alerted)
        assert ("alerted" in json.loads(render_json([d]))["digests"][0]["entries"][0]) is alerted


# --- a GitHub repository ----------------------------------------------------------------------------


async def test_a_github_repository_alerted_on_its_push(make_bot, slack, llm, fake_github, time_):
    repo = "octo/widgets"
    fake_github.add_repo(repo)
    fake_github.add_commit(repo, "init", committed_at=T0 - timedelta(days=2), contents={"src/wire.py": "V = 1\n"})
    fake_github.add_commit(  # before `alerts high`: history, never alerted
        repo,
        "feat!: drop the v9 wire format",
        committed_at=T0 - timedelta(hours=3),
        files=[FakeFile("src/wire.py", "modified", additions=1, deletions=1)],
    )
    bot = await make_bot(github_api_url=fake_github.url)
    await command(bot, f"subscribe {repo} alerts high")
    assert "alerts: each new high-importance commit" in texts(slack)[-1]
    sha = fake_github.add_commit(
        repo,
        "feat!: drop the v0 wire format",
        committed_at=T0 + timedelta(minutes=2),
        files=[FakeFile("src/wire.py", "modified", additions=1, deletions=1)],
    )
    fake_github.add_commit(
        repo,
        "docs: typo",
        committed_at=T0 + timedelta(minutes=3),
        files=[FakeFile("README.md", "modified", additions=1, deletions=1)],
    )
    time_.now = T0 + timedelta(minutes=4)
    status, body = await hook(bot, {"ref": "refs/heads/main", "repository": {"full_name": "Octo/Widgets"}})
    assert status == 202 and json.loads(body)["polls"] == 1
    await bot.settle()
    alerts = [t for t in texts(slack) if "wire format" in t]
    assert len(alerts) == 1 and "drop the v0 wire format" in alerts[0] and "typo" not in slack.all_text()
    assert analyses_asked(llm) == 2  # the two new commits; the history was not even read
    time_.now = T0 + timedelta(minutes=11)
    listed = fake_github.count("GET", f"/repos/{repo}/commits")
    heads = fake_github.count("GET", f"/repos/{repo}/commits/main")
    assert await poll(bot, time_.now) == ["nothing new"]
    assert len([t for t in texts(slack) if "wire format" in t]) == 1
    assert analyses_asked(llm) == 2 and fake_github.count("GET", f"/repos/{repo}/commits/{sha}") <= 1
    # A quiet poll reads the branch's head, finds it where the last poll left it, and lists nothing:
    # one request a period for each alerting subscription, against GitHub's rate limit.
    assert fake_github.count("GET", f"/repos/{repo}/commits/main") == heads + 1
    assert fake_github.count("GET", f"/repos/{repo}/commits") == listed


async def test_a_github_apps_push_webhook_alerts_and_reads_github_as_the_app(make_bot, slack, llm, fake_github, time_):
    """A GitHub App's webhook (its secret is GITHUB_WEBHOOK_SECRET; the push names its installation)
    wakes the poll, which reads the private repository with the installation's token."""
    repo = "octo/widgets"
    app = fake_github.enable_app(app_id="4242", slug="digest-bot")
    installation = app.install("octo")
    fake_github.add_repo(repo, private=True)
    fake_github.add_commit(repo, "init", committed_at=T0 - timedelta(days=2), contents={"src/wire.py": "V = 1\n"})
    bot = await make_bot(github_api_url=fake_github.url, github_app_id="4242", github_app_private_key=app.private_pem)
    await command(bot, f"subscribe {repo} alerts high")
    assert "alerts: each new high-importance commit" in texts(slack)[-1]
    fake_github.add_commit(
        repo,
        "feat!: drop the v0 wire format",
        committed_at=T0 + timedelta(minutes=2),
        files=[FakeFile("src/wire.py", "modified", additions=1, deletions=1)],
    )
    time_.now = T0 + timedelta(minutes=4)
    payload = {"ref": "refs/heads/main", "repository": {"full_name": repo}, "installation": {"id": installation}}
    status, body = await hook(bot, payload)
    assert status == 202 and json.loads(body)["polls"] == 1
    await bot.settle()
    assert [t for t in texts(slack) if "drop the v0 wire format" in t]
    read = [r.headers.get("authorization", "") for r in fake_github.requests if r.path.startswith(f"/repos/{repo}/")]
    assert read and all(a.startswith("token ghs_") for a in read if not a.startswith("Bearer "))
    assert app.tokens_issued == 1


# --- a GitLab project ---------------------------------------------------------------------------------


async def gitlab_hook(bot: Bot, project: str, token: str | None) -> tuple[int, str]:
    """GitLab's push event as GitLab sends it: JSON, the secret token in X-Gitlab-Token."""
    body = {"object_kind": "push", "ref": "refs/heads/main", "project": {"path_with_namespace": project}}
    headers = {"X-Gitlab-Event": "Push Hook", "Content-Type": "application/json"}
    if token is not None:
        headers["X-Gitlab-Token"] = token
    url = f"http://127.0.0.1:{bound_port(bot.runner)}/gitlab/webhook"
    async with aiohttp.ClientSession() as session, session.post(url, data=json.dumps(body), headers=headers) as resp:
        return resp.status, await resp.text()


async def test_a_gitlab_project_alerted_on_its_signed_push(make_bot, slack, llm, fake_gitlab, time_):
    from tests.fakes.gitlab_server import FakeDiff

    project = "acme/platform/widgets"
    fake_gitlab.add_project(project)
    fake_gitlab.add_commit(project, "init", committed_at=T0 - timedelta(days=2), contents={"src/wire.py": "V = 1\n"})
    bot = await make_bot(gitlab_url=fake_gitlab.url)
    await command(bot, f"subscribe gitlab:{project} alerts high")
    assert "alerts: each new high-importance commit" in texts(slack)[-1]
    await poll(bot, T0)  # where the alerts start from
    sha = fake_gitlab.add_commit(
        project,
        "feat!: drop the v0 wire format\n\nBREAKING CHANGE: clients on v0 must upgrade.",
        committed_at=T0 + timedelta(minutes=2),
        diffs=[FakeDiff("src/wire.py", lines=2)],
    )
    time_.now = T0 + timedelta(minutes=4)
    before = len(slack.top_level(CHANNEL))
    assert (await gitlab_hook(bot, project, None))[0] == 401
    assert (await gitlab_hook(bot, project, "not-the-token"))[0] == 403
    await bot.settle()
    assert len(slack.top_level(CHANNEL)) == before  # refused pushes wake nothing
    status, body = await gitlab_hook(bot, project, GITLAB_SECRET)
    assert status == 202 and json.loads(body)["polls"] == 1
    await bot.settle()
    alerts = [m for m in slack.top_level(CHANNEL)[before:] if "wire format" in shown(m)]
    assert len(alerts) == 1 and "drop the v0 wire format" in shown(alerts[0])
    assert f"{fake_gitlab.url}/{project}/-/commit/{sha}" in json.dumps(alerts[0].blocks)  # GitLab's link


async def test_the_webhook_is_served_only_with_its_secret_and_queues_a_job(make_bot, slack, widgets, time_):
    from bot.runtime.processes import public_routes

    bot = await make_bot()
    paths = lambda settings: [path for _, path, _ in public_routes(settings, bot.chat, [bot.adapter])]  # noqa: E731
    assert "/github/webhook" not in paths(bot.chat.settings)
    assert "/github/webhook" in paths(
        bot.chat.settings.model_copy(update={"github_webhook_secret": SecretStr(HOOK_SECRET)})
    )

    # With the job queue (as `serve` has it), a push enqueues one keyed "alert" job; a worker runs it.
    await command(bot, "subscribe acme/widgets alerts high")
    await poll(bot, T0)
    land(widgets, "high", T0 + timedelta(minutes=2))
    time_.now = T0 + timedelta(minutes=3)
    settings = bot.chat.settings
    jobs = await Jobs.connect(settings)
    bot.chat.jobs = jobs
    worker = JobWorker(settings, bot.chat)
    try:
        push = {"repository": {"full_name": "acme/widgets"}}
        assert (await hook(bot, push))[0] == 202
        assert (await hook(bot, push))[0] == 202
        assert await jobs.pending() == 1  # one job for the burst
        assert len(slack.top_level(CHANNEL)) == 1
        await worker.start()
        bot.chat.worker = worker
        await bot.chat.drain()
        assert "drop the v0 wire format" in texts(slack)[-1] and len(slack.top_level(CHANNEL)) == 2
    finally:
        bot.chat.worker = None
        await worker.close()
        await jobs.close()
