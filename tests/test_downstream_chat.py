"""A subscription's fork through Slack end to end: `subscribe … fork org/our-fork@branch` typed into
the real endpoint (fake Slack Web API, real Redis), the fork fetched into its mirror from a local
bare repository, the scheduled digest with its Downstream section, and a direct message to the
person who named the fork for each conflicting commit — once."""

from __future__ import annotations

import subprocess
import uuid
from datetime import date

import pytest

from bot.core.window import day_window
from bot.render import slack as R
from tests.downstream_repos import bare_copy, build
from tests.shared.slack import CHANNEL, shown, shown_eph

USAGE = "/digest subscribe owner/repo"


@pytest.fixture
def repos(tmp_path):
    return build(tmp_path)


@pytest.fixture
def widgets(repos):  # make_bot's repository (the default one): the upstream of our fork
    return repos["up"]


@pytest.fixture
def remotes(tmp_path, repos):
    path = tmp_path / "remotes"
    bare_copy(repos["fork"], path / "org" / "our-fork.git")
    return path


async def test_subscribe_with_a_fork_then_the_digest_and_one_dm_per_conflict(make_bot, slack, repos, remotes):
    bot = await make_bot(slack_admin_users="UADMIN", fork_git_url=f"file://{remotes}/{{repo}}.git")
    up = str(repos["up"].path)
    await bot.sender.slash(f"subscribe {up} at 09:30 lang en fork org/our-fork@ours", user="UADMIN")
    await bot.settle()
    confirmation = shown(slack.top_level(CHANNEL)[-1])
    assert "✅ Subscribed to" in confirmation and "fork org/our-fork@ours" in confirmation, confirmation
    [sub] = await bot.chat.subs.for_channel("slack", CHANNEL)
    assert (sub.fork, sub.owner) == ("org/our-fork@ours", "UADMIN")

    await bot.chat.deliver_subscription(sub, day_window(date(2026, 1, 28), "Asia/Shanghai"), f"push-{uuid.uuid4().hex}")
    await bot.settle()
    parent = next(m for m in slack.top_level(CHANNEL) if "Daily update report" in shown(m))
    text = shown(parent)
    assert "⬇️ Downstream: org/our-fork@ours" in text
    assert "⚠️ touches a.py, which org/our-fork@ours patches in 2 hunks — conflicts" in text
    dms = [shown(m) for m in slack.messages if m.channel == "UADMIN"]
    assert len(dms) == 2, dms  # C1 (a.py) and C4 (fork_only.py)
    assert any(
        "“perf: rewrite line two of a” conflicts with org/our-fork@ours: it touches a.py, "
        "which the fork patches in 2 hunks." in d
        for d in dms
    )
    assert any("fork_only.py" in d for d in dms)

    await bot.chat.deliver_subscription(sub, day_window(date(2026, 1, 28), "Asia/Shanghai"), f"push-{uuid.uuid4().hex}")
    await bot.settle()
    assert len([m for m in slack.messages if m.channel == "UADMIN"]) == 2  # told once


async def test_a_fork_that_cannot_be_read_costs_a_notice_not_the_digest(make_bot, slack, repos, remotes):
    from dataclasses import replace

    bot = await make_bot(fork_git_url=f"file://{remotes}/{{repo}}.git")
    await bot.sender.slash(f"subscribe {repos['up'].path} lang en fork org/our-fork@ours")
    await bot.settle()
    [sub] = await bot.chat.subs.for_channel("slack", CHANNEL)
    subprocess.run(["rm", "-rf", str(remotes / "org")], check=True)  # the fork went away since
    gone = replace(sub, fork="org/gone@ours")
    outcome = await bot.chat.deliver_subscription(
        gone, day_window(date(2026, 1, 28), "Asia/Shanghai"), f"push-{uuid.uuid4().hex}"
    )
    await bot.settle()
    parents = [m for m in slack.top_level(CHANNEL) if "Daily update report" in shown(m)]
    assert len(parents) == 1, (outcome, [shown(m)[:200] for m in slack.messages])
    parent = parents[0]
    assert (
        "Could not read the fork org/gone@ours, so this digest says nothing about it: "
        "The fork org/gone does not exist" in shown(parent)
    )
    assert "perf: rewrite line two of a" in R.unescape(str(slack.all_text()))


@pytest.mark.parametrize(
    "fork,sentence",
    [
        ("org/our-fork@nope", "Branch 'nope' does not exist in org/our-fork."),
        ("org/missing@main", "The fork org/missing does not exist (or the bot cannot see it)."),
        ("org/our-fork@", "'org/our-fork@' ends with @ but names no branch after it."),
        ("{path}@ours", "In chat, name a fork on GitHub as owner/name@branch"),
    ],
)
async def test_bad_fork_is_one_private_sentence_and_the_usage(make_bot, slack, repos, remotes, fork, sentence):
    bot = await make_bot(fork_git_url=f"file://{remotes}/{{repo}}.git")
    value = fork.format(path=repos["fork"].path)
    await bot.sender.slash(f"subscribe {repos['up'].path} fork {value}")
    await bot.settle()
    assert len(slack.ephemerals) == 1
    line = R.unescape(shown_eph(slack.ephemerals[0]))
    assert line.startswith("⚠️") and sentence in line and USAGE in line and "[fork org/our-fork@branch|off]" in line
    assert slack.top_level(CHANNEL) == []
    assert await bot.chat.subs.for_channel("slack", CHANNEL) == []


async def test_fork_off_drops_it(make_bot, slack, repos, remotes):
    bot = await make_bot(fork_git_url=f"file://{remotes}/{{repo}}.git")
    await bot.sender.slash(f"subscribe {repos['up'].path} fork org/our-fork@ours")
    await bot.settle()
    await bot.sender.slash(f"subscribe {repos['up'].path} fork off")
    await bot.settle()
    [sub] = await bot.chat.subs.for_channel("slack", CHANNEL)
    assert sub.fork is None


async def test_feishu_subscription_with_a_fork_dms_its_owner(make_settings, repos, remotes):
    """The same on Feishu: the conflict goes to the owner's open_id (receive_id_type=open_id)."""
    from tests.shared.feishu import GROUP, feishu_env, markdowns

    async with feishu_env(
        make_settings, repos["up"], fork_git_url=f"file://{remotes}/{{repo}}.git", default_lang="en"
    ) as env:
        status, _ = await env.say(f"subscribe {repos['up'].path} lang en fork org/our-fork@ours")
        assert status == 200
        await env.settle()
        [sub] = await env.chat.subs.for_channel("feishu", GROUP)
        assert sub.fork == "org/our-fork@ours" and sub.owner.startswith("ou_")
        await env.chat.deliver_subscription(
            sub, day_window(date(2026, 1, 28), "Asia/Shanghai"), f"push-{uuid.uuid4().hex}"
        )
        await env.settle()
        digest = markdowns(env.fake, env.fake.top_level(GROUP)).replace("\u200b", "")
        assert "⬇️ Downstream: org/our-fork@ours" in digest
        dms = markdowns(env.fake, env.fake.top_level(sub.owner)).replace("\u200b", "")
        assert dms.count("conflicts with org/our-fork@ours") == 2, dms
