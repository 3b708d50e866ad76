"""A chat platform is one registry entry (bot/core/platform_registry.py) plus its adapter and
renderer modules: a third platform registered here, in a test only (tests/shared/parrot.py), is
built by the processes, subscribed to, delivered to, and held to its own admin list and mention
format — with no other module edited. And admin lists are per workspace (bot/conversation/policy.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, date, datetime

import aiohttp
import pytest

from bot.conversation.policy import is_admin
from bot.core.models import UsageError
from bot.core.platform_registry import MentionForm, PlatformEntry, registered
from bot.runtime.app import App
from bot.runtime.processes import build_adapters, public_routes
from bot.runtime.services import Services
from handlers.web import bound_port, build_app, start_server
from tests.shared.slack import HIGH_TITLE, build_widgets

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
ADMINS = "T1/UADMIN, T2/UBOSS"  # Parrot's admin list, as its setting would hold it

PARROT = PlatformEntry(
    "parrot",
    enabled=lambda settings: True,  # a real entry reads its credentials from the settings
    builds="tests.shared.parrot:build_parrot",
    enables="PARROT_TOKEN",
    admins=lambda settings: ADMINS,
    admins_setting="PARROT_ADMIN_USERS",
    mentions=(MentionForm("parrot_user", re.compile(r"^\(\(([a-z]{1,20})\)\)$"), "(({id}))"),),
)


@pytest.fixture
def repo(tmp_path):
    return build_widgets(tmp_path / "widgets", date(2026, 1, 28), extra={".github/CODEOWNERS": "/src/ @acme/core\n"})


@pytest.fixture
async def parrot(make_settings, repo):
    """The bot as `run` builds it, with Parrot registered: its adapter, its routes on the public
    server; `say(team, user, text)` posts a request from a Parrot workspace."""
    settings = make_settings(default_repo=str(repo.path), default_lang="en", catchup_minutes=60)
    services = Services.build(settings, clock=lambda: NOW)
    app = App.build(services, clock=lambda: NOW)
    with registered(PARROT):
        adapters = build_adapters(settings, app, receive=True)
        runner = await start_server(build_app(services.store, public_routes(settings, app, adapters)), "127.0.0.1", 0)
        session = aiohttp.ClientSession()

        async def say(team: str, user: str, text: str, channel: str = "C1") -> None:
            body = {"channel": channel, "user": user, "text": text}
            url = f"http://127.0.0.1:{bound_port(runner)}/parrot/events"
            async with session.post(url, json=body, headers={"X-Parrot-Team": team}) as resp:
                assert resp.status == 200

        say.app, say.adapters, say.settings = app, adapters, settings
        try:
            yield say
        finally:
            await session.close()
            await runner.cleanup()
            await services.aclose()


def private_to(say, user: str) -> list[str]:
    return [text for _, who, text in say.adapters[0].platform.private if who == user]


async def test_a_third_platform_is_one_entry_built_subscribed_and_delivered_to(parrot):
    (adapter,) = parrot.adapters  # no Slack or Feishu configured: the one enabled entry
    assert parrot.app.platforms["parrot"] is adapter.platform
    await parrot("T1", "UADMIN", "subscribe . at 09:20")
    said = [text for channel, text in adapter.platform.sent if channel == "T1/C1"]
    assert any("✅ Subscribed to" in line for line in said), said
    (sub,) = await parrot.app.subs.all()
    assert (sub.platform, sub.channel) == ("parrot", "T1/C1")
    await parrot("T1", "UADMIN", "owners @acme/core ((alice))")
    assert any("@acme/core → ((alice))" in text for _, text in adapter.platform.sent)  # its own markup
    outcomes = [r[2] for r in await parrot.app.make_clock(now=lambda: NOW).tick()]
    assert outcomes == ["delivered"]
    posted = "\n".join(text for channel, text in adapter.platform.sent if channel == "T1/C1")
    assert "Daily update report (2026-01-28)" in posted and HIGH_TITLE in posted
    assert "((alice)): your paths are touched by 1 high commit and 1 medium commit." in posted  # its renderer's mention


async def test_a_third_platforms_admin_list_applies_per_workspace(parrot):
    platform = parrot.adapters[0].platform
    await parrot("T2", "UADMIN", "subscribe . at 09:20")  # T1's admin, in workspace T2
    assert "Only the bot's admins can change this channel's subscriptions." in private_to(parrot, "T2/UADMIN")[-1]
    await parrot("T3", "UBOSS", "subscribe .")  # T2's admin in a workspace with no admins of its own
    assert "Only the bot's admins" in private_to(parrot, "T3/UBOSS")[-1]
    await parrot("T1", "T2/UBOSS", "subscribe .")  # a body naming T2 from T1 is T1's `T1/T2/UBOSS`
    assert "Only the bot's admins" in private_to(parrot, "T1/T2/UBOSS")[-1]
    assert await parrot.app.subs.all() == []
    await parrot("T2", "UBOSS", "subscribe . at 09:20")
    assert [(s.platform, s.channel) for s in await parrot.app.subs.all()] == [("parrot", "T2/C1")]
    await parrot("T2", "UBOSS", "owners @acme/core <@U0ALICE>")  # another platform's mention
    assert "<@U0ALICE>" in private_to(parrot, "T2/UBOSS")[-1] and not any("→ <@U0ALICE>" in t for _, t in platform.sent)


async def test_help_says_who_may_change_what(parrot, make_settings):
    await parrot("T1", "USOMEONE", "help")
    assert (
        "for the bot's admins in this workspace (PARROT_ADMIN_USERS); anyone may list and ask."
        in (private_to(parrot, "T1/USOMEONE")[-1])
    )


async def test_help_says_anyone_may_change_what_when_no_admins_are_set(console):
    said = await console("/digest help")
    assert "Anyone in this conversation may subscribe, unsubscribe, change `config` and map owners" in said


def test_a_registered_platform_may_be_named_in_the_subscriptions_file(tmp_path, make_settings):
    from bot.channels.subscriptions import load_subscription_file

    path = tmp_path / "subscriptions.toml"
    path.write_text('[[subscription]]\nplatform = "parrot"\nchannel = "T1/C1"\nrepo = "acme/widgets"\n')
    with pytest.raises(UsageError, match=r"platform must be one of slack, feishu, console\."):
        load_subscription_file(path, make_settings())
    with registered(PARROT):
        (sub,) = load_subscription_file(path, make_settings())
    assert (sub.platform, sub.channel) == ("parrot", "T1/C1")


def test_the_registry_imports_no_sdk_until_an_enabled_platform_is_built(tmp_path):
    """The processes, the policy and the commands read the registry; only building an enabled
    platform's adapter imports its SDK (lark_oapi takes seconds)."""
    script = (
        "import sys\n"
        "from settings import load_settings\n"
        "from bot.core import platform_registry\n"
        "import bot.runtime.processes, bot.conversation.commands\n"
        "s = load_settings(feishu_app_id='cli_x', feishu_app_secret='y', redis_url='redis://127.0.0.1:1/0')\n"
        "print(json.dumps([[e.name for e in platform_registry.enabled(s)],\n"
        "    sorted(m for m in ('lark_oapi', 'slack_sdk', 'slack_bolt') if m in sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert json.loads(out.stdout) == [["feishu"], []]


def test_an_adapter_missing_a_credential_is_refused_before_its_sdk_is_imported(make_settings):
    from bot.core.platform_registry import by_name

    feishu = by_name("feishu")
    assert feishu is not None
    settings = make_settings(feishu_app_id="cli_x", feishu_app_secret="y", feishu_mode="http")
    with pytest.raises(Exception, match="FEISHU_VERIFICATION_TOKEN"):
        feishu.check(settings, True)
    feishu.check(settings, False)  # a clock only sends: no callback to verify


# --- admin lists, per workspace ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "admins, channel, user, admin",
    [
        ("U1", "C1", "U1", True),  # one workspace: bare ids, as always
        ("U1", "C1", "U2", False),
        ("U1", "T1/C1", "T1/U1", True),  # `U1`: that person in any workspace
        ("U1", "T2/C9", "T2/U1", True),
        ("T1/U1", "T1/C1", "T1/U1", True),  # `T1/U1`: that person, in T1 only
        ("T1/U1", "T2/C1", "T2/U1", False),
        ("T1/U1", "C1", "U1", False),  # an entry naming a workspace is no single-workspace admin
        ("U1", "T1/C1", "T2/U1", False),  # a person of workspace T2 is never T1's admin…
        ("T2/U1", "T1/C1", "T2/U1", False),  # …even T2's own admin
        ("U1", "C1", "T1/U1", False),  # a qualified person in a bare conversation
        ("T1/U1", "T1/C1", "T1/T1/U1", False),  # a `T1/` typed into an id stays part of the id
        ("T1/*", "T1/C7", "T1/U9", True),  # `T1/*`: anyone in T1
        ("T1/*", "T2/C7", "T2/U9", False),
    ],
)
def test_an_admin_of_one_workspace_is_not_an_admin_of_another(admins, channel, user, admin):
    assert is_admin(frozenset(a.strip() for a in admins.split(",")), channel, user) is admin


async def test_slack_admin_users_apply_per_workspace(make_settings):
    from bot.core.chat_platform import Conversation

    services = Services.build(make_settings(slack_admin_users="T1/UADMIN,UOPS"))
    try:
        policy = App.build(services).policy
        policy.require_admin(Conversation("slack", "T1/C1", "T1/UADMIN"))
        policy.require_admin(Conversation("slack", "T2/C1", "T2/UOPS"))
        for channel, user in (("T2/C1", "T2/UADMIN"), ("T1/C1", "T2/UOPS"), ("C1", "UADMIN")):
            with pytest.raises(UsageError, match="Only the bot's admins"):
                policy.require_admin(Conversation("slack", channel, user))
        policy.require_admin(Conversation("feishu", "T1/oc_1", "T1/ou_anyone"))  # Feishu sets no admins
    finally:
        await services.aclose()
