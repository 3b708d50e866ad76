"""Every Redis key the bot writes belongs to a family of bot/backup/keys.py, which says whether a
backup holds it: read from the code (every `store.k("family", …)`), and from a real Redis after a
realistic run through the real Slack adapter and the fake Slack — a subscription with alerts, a
scheduled and an on-demand digest, a question in the thread, a level correction, owner mappings,
a watch and its direct messages, the report links, the clock queueing a push."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bot.backup.keys import FAMILIES, Kind, classify
from bot.core.models import Subscription
from bot.delivery.spec import scheduled_spec
from bot.render import slack as R
from bot.runtime.queue import Jobs
from tests.shared.slack import MEDIUM_TITLE, buttons, by_title, digest_thread

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
PUBLIC = "https://digest.example.com"


def _families_named_in_code() -> set[str]:
    """The first literal part of every `X.k("…", …)` call of the product."""
    found: set[str] = set()
    for top in ("bot", "handlers"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "k"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    found.add(node.args[0].value)
            for line in path.read_text(encoding="utf-8").splitlines():  # KEY_NAME-style constants
                if line.startswith("KEY_NAME = "):
                    found.add(ast.literal_eval(line.split("=", 1)[1].split("#")[0].strip()))
    return found


def test_every_family_the_code_names_is_classified():
    named = _families_named_in_code()
    assert {"subs", "ledger", "posted", "corrections", "report:signing-key"} <= named  # the reader works
    heads = {f.pattern.split(":")[0] for f in FAMILIES} | {f.pattern for f in FAMILIES}
    unclassified = sorted(n for n in named if n not in heads)
    assert unclassified == [], f"add these key families to bot/backup/keys.py's FAMILIES: {unclassified}"


def test_caches_are_never_kept_and_ledgers_always_are():
    prefix = "p:"
    kept = {
        "subs",
        "ledger:slack:C1:acme/app:2026-01-28",
        "corrections:repo:acme/app",
        "report:signing-key",
        "report:Abc123",
        "posted:slack:C1:1.2",
        "history:slack:C1:1.2",
        "llm:tokens:2026-01",
        "llm:tokens:ws:slack:T1:2026-01",
    }
    caches = {"analysis:x:y:z:en", "files:x:y", "digest:x:main:a:b:tz:en:tag:shown", "taste2:3:x:2026-01-28"}
    passing = {"delivery:slack:C1:acme/app:2026-01-28:lock", "report:tap:nonce", "event:slack:Ev1", "jobs:running"}
    assert {k for k in kept if classify(prefix + k, prefix).kind is Kind.BACKUP} == kept
    assert {k for k in caches if classify(prefix + k, prefix).kind is Kind.CACHE} == caches
    assert {k for k in passing if classify(prefix + k, prefix).kind is Kind.TRANSIENT} == passing
    assert classify("arq:job:p:deliver:x", prefix).kind is Kind.TRANSIENT
    assert classify("arq:job:other:deliver:x", prefix) is None  # another deployment's job
    assert classify(prefix + "something-new:1", prefix) is None


async def test_every_key_a_realistic_run_writes_is_classified(make_bot, slack, widgets):
    bot = await make_bot(public_base_url=PUBLIC)
    store = bot.services.store
    say = bot.sender.slash
    assert (await say("subscribe acme/widgets alerts high"))[0] == 200
    assert (await say("owners map @acme/core <!subteam^S0CORE>", user="UADMIN"))[0] == 200
    assert (await say("config lang en"))[0] == 200
    assert (await say("watch acme/widgets src/**", channel="D0001"))[0] == 200
    await bot.settle()

    (sub,) = await bot.chat.subs.all()
    assert await bot.chat.deliveries.run(scheduled_spec(store, sub, date(2026, 1, 28))) == "delivered"
    parent, replies = await digest_thread(bot, slack)  # on demand
    question = f"<@UBOT> what does {widgets.shas['high'][:7]} break?"
    ask = bot.sender.message_event(question, kind="app_mention", thread_ts=parent.ts)
    assert (await bot.sender.event(ask))[0] == 200
    await bot.settle()
    medium = by_title(replies, MEDIUM_TITLE)
    button = buttons(medium)["digest_level_too_high"]
    tapped = await bot.sender.block_action(
        "digest_level_too_high", value=button["value"], user="U0ANA", message_ts=medium.ts, thread_ts=medium.thread_ts
    )
    assert tapped[0] == 200
    await bot.settle()
    clock = bot.chat.make_clock(now=lambda: NOW)
    await clock.tick_alerts(NOW)
    await clock.tick_watches(NOW, timedelta(minutes=180))
    await bot.chat.subs.upsert(Subscription("slack", "C0002", "acme/widgets", at="09:00", tz="Asia/Shanghai"))
    jobs = await Jobs.connect(bot.chat.settings)
    try:
        await bot.chat.make_clock(now=lambda: NOW, jobs=jobs).tick()  # queues the other channel's push
    finally:
        await jobs.close()
    await bot.settle()
    assert "Level corrected" in R.unescape(slack.all_text())

    prefix = store.prefix
    keys = await store.scan(prefix + "*") + [k for k in await store.scan("arq:*") if prefix in k]
    unclassified = sorted(k for k in keys if classify(k, prefix) is None)
    assert unclassified == [], f"add these key families to bot/backup/keys.py's FAMILIES: {unclassified}"
    seen = {classify(k, prefix).pattern for k in keys}
    expected = {
        "subs", "chancfg:*", "owners:*", "watches", "corrections:*", "ledger:*", "posted:*", "slack:sent:*",
        "thread:*", "history:*", "alertsince:*", "report:signing-key", "report:*", "watchsent:*",
        "watchrun:*:done", "analysis:*", "digest:*", "arq:*", "event:*",
    }  # fmt: skip
    assert expected <= seen, sorted(expected - seen)
