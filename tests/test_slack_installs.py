"""Slack installed into many workspaces (OAuth): two workspaces installed through /slack/install and
/slack/oauth_redirect (the real redirect flow, the state cookie, the fake's authorize page and
oauth.v2.access), each receiving its own scheduled push and its answers with its own token; an
uninstall stopping one and not the other; token rotation refreshed once by 20 concurrent callers;
requests naming a workspace without an installation refused; a bad OAuth callback answered with
a page, never a traceback. Real slack_sdk / Bolt against the fake Slack, real Redis."""

from __future__ import annotations

import asyncio
import html
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode

import aiohttp
import pytest

from bot.core.models import Subscription
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import FAST, SECRET, serve_slack, shown

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai: the 28th's push is due
TEAM_A, TEAM_B = "TAAAA1", "TBBBB2"
CHAN_A, CHAN_B = "CAAAA1", "CBBBB2"


@dataclass
class OAuthBot:
    chat: App
    adapter: object
    base: str
    services: Services
    runner: object
    senders: list

    def sender(self, team: str) -> SlackSender:
        sender = SlackSender(f"{self.base}/slack/events", SECRET, team_id=team)
        self.senders.append(sender)
        return sender


@pytest.fixture
async def oauth_bot(make_settings, widgets):
    made: list[OAuthBot] = []
    fakes: list[FakeSlack] = []

    async def build(slack: FakeSlack, **overrides) -> OAuthBot:
        values = dict(
            slack_client_id=slack.client_id,
            slack_client_secret=slack.client_secret,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
        )
        values.update(overrides)
        services, chat, adapter, runner, base = await serve_slack(make_settings(**values))
        slack.redirect_uri = f"{base}/slack/oauth_redirect"  # the app's configured Redirect URL
        bot = OAuthBot(chat, adapter, base, services, runner, [])
        made.append(bot)
        return bot

    yield build
    for bot in made:
        for sender in bot.senders:
            await sender.close()
        await bot.chat.drain()
        await bot.adapter.close()
        await bot.runner.cleanup()
        await bot.services.aclose()
    for fake in fakes:
        fake.stop()


@pytest.fixture
def teams():
    with FakeSlack() as fake:
        fake.add_team(TEAM_A, name="Acme", channels=(CHAN_A,))
        fake.add_team(TEAM_B, name="Bolt & Co", channels=(CHAN_B,))
        yield fake


async def start_install(bot: OAuthBot, team: str, lang: str = "en") -> tuple[str, str]:
    """What a person's browser does first: open /slack/install, follow "Add to Slack" to Slack's
    authorize page, which sends it back towards /slack/oauth_redirect. Returns that URL and the
    state cookie the first page set (a Secure cookie: a browser sends it back over https; here
    it is passed by hand)."""
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{bot.base}/slack/install?team={team}", headers={"Accept-Language": lang}) as page:
            assert page.status == 200
            body = await page.text()
            state_cookie = page.headers["Set-Cookie"].split(";")[0]
        url = html.unescape(re.search(r'<a href="([^"]+)" id="add-to-slack"', body).group(1))
        async with http.get(url, allow_redirects=False) as slack_page:
            assert slack_page.status == 302
            return slack_page.headers["Location"], state_cookie


async def finish_install(back: str, cookie: str | None, lang: str = "en") -> tuple[int, str]:
    headers = {"Accept-Language": lang, **({"Cookie": cookie} if cookie else {})}
    async with aiohttp.ClientSession() as http, http.get(back, headers=headers, allow_redirects=False) as done:
        return done.status, await done.text()


async def install(bot: OAuthBot, team: str, *, lang: str = "en", cookie: bool = True) -> tuple[int, str]:
    back, state_cookie = await start_install(bot, team, lang)
    return await finish_install(back, state_cookie if cookie else None, lang)


async def test_two_workspaces_installed_each_gets_its_own_push_with_its_own_token(oauth_bot, teams, widgets):
    bot = await oauth_bot(teams)
    status, page = await install(bot, TEAM_A, lang="zh-CN,zh;q=0.9")
    assert status == 200
    assert "Digest Bot 已安装到 Acme" in page and "/digest subscribe owner/repo" in page
    status, page = await install(bot, TEAM_B)
    assert status == 200
    assert "Digest Bot is installed in Bolt &amp; Co. What to do next:" in page

    repo = str(widgets.path)
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        await bot.chat.subs.upsert(
            Subscription("slack", f"{team}/{channel}", repo, at="09:20", tz="Asia/Shanghai", lang="en")
        )
    outcomes = [o for _, _, o in await bot.chat.make_clock(now=lambda: NOW).tick()]
    assert outcomes == ["delivered", "delivered"]

    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        parents = teams.top_level(channel)
        assert len(parents) == 1 and "2026-01-28" in shown(parents[0])
        sent = teams.calls_by(team)
        assert sent and {c.params.get("channel") for c in sent if c.params.get("channel")} == {channel}
    assert teams.calls_by("T0001") == []  # nothing with a token of no installed workspace
    assert teams.channel_team == {CHAN_A: TEAM_A, CHAN_B: TEAM_B}
    assert not [c for c in teams.calls if c.method == "chat.postMessage" and "channel_not_found" in str(c)]

    # an answer in A's thread: asked from A, answered in A's channel with A's token only
    before_b = len(teams.calls_by(TEAM_B))
    parent = teams.top_level(CHAN_A)[0]
    sender = bot.sender(TEAM_A)
    status, _ = await sender.event(
        sender.message_event("what changed in the export?", channel=CHAN_A, user="UA1", thread_ts=parent.ts)
    )
    assert status == 200
    await bot.chat.drain()
    assert teams.replies(CHAN_A, parent.ts)[-1].text or teams.replies(CHAN_A, parent.ts)[-1].blocks
    assert len(teams.calls_by(TEAM_B)) == before_b  # 0 calls with the other team's token

    from bot.backup.keys import Kind, classify

    store = bot.chat.store
    keys = await store.scan(store.prefix + "*")
    assert [k for k in keys if classify(k, store.prefix) is None] == []  # every key has a family
    assert classify(store.k("slack", "install", TEAM_A), store.prefix).kind is Kind.BACKUP


async def test_uninstall_stops_one_workspace_and_not_the_other(oauth_bot, teams, widgets, caplog):
    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    repo = str(widgets.path)
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        await bot.chat.subs.upsert(
            Subscription("slack", f"{team}/{channel}", repo, at="09:20", tz="Asia/Shanghai", lang="en")
        )

    teams.revoke(TEAM_A)  # Slack revokes the tokens and tells the app
    sender = bot.sender(TEAM_A)
    status, _ = await sender.event({"type": "app_uninstalled"})
    assert status == 200
    assert await bot.adapter.installs.get(TEAM_A) is None
    assert await bot.adapter.installs.get(TEAM_B) is not None

    revoked_calls = len(teams.calls_by(TEAM_A))
    ticked = await bot.chat.make_clock(now=lambda: NOW).tick()
    assert [(sub.channel, outcome) for sub, _, outcome in ticked] == [(f"{TEAM_B}/{CHAN_B}", "delivered")]
    await bot.chat.make_clock(now=lambda: NOW).tick()  # still due for A: skipped again, silently
    assert teams.top_level(CHAN_A) == []  # nothing sent to the uninstalled workspace
    assert len(teams.calls_by(TEAM_A)) == revoked_calls  # not even tried with its dead token
    assert len(teams.top_level(CHAN_B)) == 1  # the other is served as before
    assert caplog.text.count("Slack workspace TAAAA1 has no installation") == 1  # one line
    assert [s.channel for s in await bot.chat.subs.all()].count(f"{TEAM_A}/{CHAN_A}") == 1  # kept

    # tokens_revoked (bot) forgets B too
    sender_b = bot.sender(TEAM_B)
    status, _ = await sender_b.event({"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOTTBBBB2"]}})
    assert status == 200
    assert await bot.adapter.installs.get(TEAM_B) is None

    # a reinstall resumes A's subscription
    assert (await install(bot, TEAM_A))[0] == 200
    tomorrow = NOW.replace(day=30)
    await bot.chat.make_clock(now=lambda: tomorrow).tick()
    assert len(teams.top_level(CHAN_A)) == 1


async def test_twenty_calls_at_expiry_refresh_the_token_once(oauth_bot, teams):
    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    installs = bot.adapter.installs
    record = await installs.get(TEAM_A)
    old_token, old_refresh = record["bot_token"], record["bot_refresh_token"]
    await installs.put({**record, "bot_token_expires_at": int(time.time()) + 5})  # about to expire

    platform = bot.adapter.platform
    second = build_slack(bot.adapter.settings, bot.chat.router, receive=False, pacing=FAST)  # another process
    results = await asyncio.gather(*(p.client_for(f"{TEAM_A}/{CHAN_A}") for p in [platform, second.platform] * 10))
    assert teams.refreshes == 1
    tokens = {client.token for client, _ in results}
    assert len(tokens) == 1 and old_token not in tokens
    fresh = await installs.get(TEAM_A)
    assert fresh["bot_token"] in tokens and fresh["bot_refresh_token"] != old_refresh
    assert fresh["bot_token_expires_at"] > time.time() + 3600
    # the post goes out with the fresh token
    await platform.post(f"{TEAM_A}/{CHAN_A}", {"text": "hello", "blocks": []}, None)
    assert teams.calls_to("chat.postMessage")[-1].headers["authorization"] == f"Bearer {fresh['bot_token']}"


async def test_events_of_a_workspace_without_an_installation_are_refused(oauth_bot, teams, widgets):
    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    stranger = bot.sender(TEAM_B)  # B never installed: signed by the app, but no installation
    status, _ = await stranger.slash("2026-01-28", channel=CHAN_B, user="UB1")
    await bot.chat.drain()
    assert teams.top_level(CHAN_B) == [] and teams.calls_by(TEAM_B) == []
    assert teams.calls_to("chat.postMessage") == []
    forged = bot.sender(TEAM_A)
    status, _ = await forged.slash("2026-01-28", channel=CHAN_A, user="UA1", secret="not-the-signing-secret")
    assert status == 401
    await bot.chat.drain()
    assert teams.calls_to("chat.postMessage") == []


async def test_a_command_in_one_workspace_is_answered_there_with_its_token(oauth_bot, teams):
    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    sender = bot.sender(TEAM_B)
    status, _ = await sender.slash("2026-01-28", channel=CHAN_B, user="UB1")
    assert status == 200
    await bot.chat.drain()
    assert len(teams.top_level(CHAN_B)) == 1 and teams.top_level(CHAN_A) == []
    assert teams.calls_by(TEAM_A) == [c for c in teams.calls_by(TEAM_A) if c.method == "auth.test"]


@pytest.mark.parametrize(
    "case, status, says",
    [
        ("denied", 200, "The installation was cancelled in Slack"),
        ("no_cookie", 400, "This installation link has expired or was already used"),
        ("replayed", 400, "This installation link has expired or was already used"),
        ("forged_state", 400, "This installation link has expired or was already used"),
    ],
)
async def test_a_bad_oauth_callback_gets_a_clear_page(oauth_bot, teams, case, status, says):
    bot = await oauth_bot(teams)
    if case == "denied":
        teams.deny_next = True
        got = await install(bot, TEAM_A)
    elif case == "no_cookie":
        got = await install(bot, TEAM_A, cookie=False)
    elif case == "replayed":  # the same redirect twice: its state was spent by the first
        back, cookie = await start_install(bot, TEAM_B)
        assert (await finish_install(back, cookie))[0] == 200
        await bot.adapter.installs.remove(TEAM_B, "test")
        got = await finish_install(back, cookie)
        assert await bot.adapter.installs.get(TEAM_B) is None
    else:  # a state the bot never issued, with a matching cookie
        got = await finish_install(
            f"{bot.base}/slack/oauth_redirect?code=x&state=never-issued", "slack-app-oauth-state=never-issued"
        )
    assert got[0] == status
    assert says in html.unescape(got[1]) and "Traceback" not in got[1]
    assert await bot.adapter.installs.get(TEAM_A) is None


async def test_an_oauth_state_is_single_use(oauth_bot, teams):
    bot = await oauth_bot(teams)
    state_store = bot.adapter.app.oauth_flow.settings.state_store
    state = await state_store.async_issue()
    results = await asyncio.gather(*(state_store.async_consume(state) for _ in range(10)))
    assert results.count(True) == 1
    assert await bot.chat.store.ttl(bot.chat.store.k("slack", "oauth_state", await state_store.async_issue())) <= 600


async def test_an_org_wide_install_keeps_its_enterprise_and_serves_its_workspaces(oauth_bot, teams):
    org = teams.add_team("TORG01", name="Grid Org", enterprise_id="EGRID1", org_wide=True, channels=("CORG01",))
    bot = await oauth_bot(teams)
    assert (await install(bot, org))[0] == 200
    record = await bot.adapter.installs.get("EGRID1")
    assert record["enterprise_id"] == "EGRID1" and record["is_enterprise_install"] is True

    sender = bot.sender("TINORG")  # a workspace of the organisation, not installed on its own
    body = dict(parse_qsl(sender.slash_body("2026-01-28", channel="CORG01", user="UO1")))
    body.update(enterprise_id="EGRID1", is_enterprise_install="true")
    status, _ = await sender.post(urlencode(body), "application/x-www-form-urlencoded")
    assert status == 200
    await bot.chat.drain()
    assert len(teams.top_level("CORG01")) == 1
    assert {c.method for c in teams.calls_by("EGRID1")} >= {"chat.postMessage"}
    store = bot.chat.store
    assert await store.scan(store.k("*EGRID1/CORG01*"))  # kept under the organisation's address
    assert not await store.scan(store.k("*TINORG*"))


def test_the_oauth_manifest_declares_what_the_installed_app_uses():
    from pathlib import Path

    from settings import Settings

    root = Path(__file__).resolve().parent.parent
    manifest = (root / "slack_manifest_oauth.yml").read_text(encoding="utf-8")
    lines = {line.split("#")[0].strip() for line in manifest.splitlines()}
    default_scopes = Settings.model_fields["slack_scopes"].default.split(",")
    assert all(f"- {scope}" in lines for scope in default_scopes)
    for event in ("app_uninstalled", "tokens_revoked", "app_mention", "message.channels", "message.im"):
        assert f"- {event}" in lines, event
    assert "- https://YOUR-HOST/slack/oauth_redirect" in lines
    assert "token_rotation_enabled: true" in lines and "org_deploy_enabled: true" in lines


def test_a_workspace_qualified_person_is_mentioned_by_their_slack_id():
    from bot.render.slack_kit import mention

    assert mention("TAAAA1/U0ALICE") == "<@U0ALICE>"
    assert mention("U0ALICE") == "<@U0ALICE>"
    assert mention("TAAAA1/not a user") == "TAAAA1/not a user"


def test_a_client_id_without_its_secret_is_one_clear_sentence(make_settings, teams):
    from bot.core.models import UsageError

    settings = make_settings(slack_client_id=teams.client_id, slack_api_url=teams.url, slack_signing_secret=SECRET)
    assert settings.slack_enabled
    with pytest.raises(UsageError, match="SLACK_CLIENT_SECRET is missing: installing the app into workspaces"):
        build_slack(settings, object(), receive=True)


async def test_every_kind_of_call_goes_with_its_own_workspaces_token(oauth_bot, teams):
    from bot.core.chat_platform import Conversation, Notice
    from tests.shared.slack import answer_pieces

    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    platform = bot.adapter.platform
    store = bot.chat.store
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        address = f"{team}/{channel}"
        # a keyed send a crashed run may have made: found (or not) with conversations.history first
        await store.set_json(store.k("slack", "sent", f"k-{team}"), {"pending": True})
        ref = await platform.send(address, Notice("digest"), key=f"k-{team}")
        await platform.update(ref, Notice("digest, edited"))
        conv = Conversation("slack", address, f"{team}/U1", thread=ref.id, extra={"team_id": team})
        await platform.reply_private(conv, Notice("only for you"))
        await platform.stream(address, ref.id, answer_pieces("an answer " * 20, size=40), conv=conv)
        await platform.upload(address, ref.id, "digest.md", "# digest", "Digest")
        dm = Conversation("slack", f"{team}/D0{team}", f"{team}/U1", is_dm=True)
        assert await platform.direct_channel(dm) == f"{team}/DU1"
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        used = {c.method for c in teams.calls_by(team)}
        assert {
            "conversations.history",
            "chat.postMessage",
            "chat.update",
            "chat.postEphemeral",
            "chat.startStream",
            "chat.appendStream",
            "chat.stopStream",
            "files.getUploadURLExternal",
            "files.completeUploadExternal",
            "conversations.open",
        } <= used
        assert {c.params["channel"] for c in teams.calls_by(team) if "channel" in c.params} == {channel}
    assert {e["user"] for e in teams.ephemerals} == {"U1"}  # the bare id Slack knows


async def test_socket_mode_with_installs_answers_each_workspace_with_its_token(oauth_bot, teams):
    from tests.fakes.slack_server import FakeSocketMode

    socket = await FakeSocketMode().start()
    teams.socket_url = socket.url
    bot = await oauth_bot(teams, slack_app_token=teams.app_token)
    assert [path for _, path, _ in bot.adapter.http_routes()] == ["/slack/install", "/slack/oauth_redirect"]
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    try:
        await bot.adapter.start()
        bodies = SlackSender("http://unused.invalid/", "unused", team_id=TEAM_B)
        envelope = await socket.push("slash_commands", dict(parse_qsl(bodies.slash_body("2026-01-28", channel=CHAN_B))))
        await socket.ack_for(envelope)
        await bot.chat.drain()
        assert len(teams.top_level(CHAN_B)) == 1 and teams.top_level(CHAN_A) == []
        assert [c for c in teams.calls_by(TEAM_A) if c.method != "auth.test"] == []
    finally:
        await bot.adapter.close()
        await socket.stop()


async def test_watches_and_alerts_of_an_uninstalled_workspace_wait_and_the_others_run(oauth_bot, teams, widgets):
    from datetime import timedelta

    from bot.watch.watch_store import Watch, Watches

    bot = await oauth_bot(teams)
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    repo = str(widgets.path)
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        await bot.chat.subs.upsert(
            Subscription("slack", f"{team}/{channel}", repo, at="23:59", tz="Asia/Shanghai", lang="en", alerts="high")
        )
        await Watches(bot.chat.store).upsert(
            Watch("slack", f"{team}/U1", f"{team}/D1", repo, "src/**", at="09:20", tz="Asia/Shanghai", lang="en")
        )
    teams.revoke(TEAM_A)
    assert (await bot.sender(TEAM_A).event({"type": "app_uninstalled"}))[0] == 200
    revoked_calls = len(teams.calls_by(TEAM_A))

    clock = bot.chat.make_clock(now=lambda: NOW)
    watched = await clock.tick_watches(NOW, timedelta(minutes=180))
    alerted = await clock.tick_alerts(NOW)
    assert [w.user for w, _, _ in watched] == [f"{TEAM_B}/U1"]  # A's person waits, kept
    assert [s.channel for s, _ in alerted] == [f"{TEAM_B}/{CHAN_B}"]
    assert len(teams.calls_by(TEAM_A)) == revoked_calls  # nothing tried with the dead token
    assert len(await Watches(bot.chat.store).all()) == 2


async def test_a_level_correction_in_one_workspace_is_that_workspace_s_alone(oauth_bot, teams, widgets):
    """Issue 35 §4: A's reader taps "level too high" on a commit of A's digest; A's message and A's
    next digest show the corrected level, while B's next digest and B's report page (subscribed to
    the same repository, served from the same cached build) show the analysis's level and nobody's
    "corrected by"; a tap on B's page stays B's."""
    import json

    from bot.render import slack as R
    from handlers.web import report_routes
    from tests.shared.report_page import PUBLIC, Page, local
    from tests.shared.slack import HIGH_TITLE, MEDIUM_TITLE, buttons, by_title, shown_eph
    from tests.test_levels_report import Forms

    bot = await oauth_bot(teams, public_base_url=PUBLIC)
    teams.redirect_uri = f"{PUBLIC}/slack/oauth_redirect"  # the app's Redirect URL: the public address
    for team in (TEAM_A, TEAM_B):
        back, cookie = await start_install(bot, team)
        assert (await finish_install(back.replace(PUBLIC, bot.base), cookie))[0] == 200  # via the proxy
    pages = await start_server(build_app(bot.services.store, report_routes(bot.services.reports)), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(pages)}"

    async def digest_in(team: str, channel: str, user: str):
        status, _ = await bot.sender(team).slash("2026-01-28", channel=channel, user=user)
        assert status == 200
        await bot.chat.drain()
        parent = teams.top_level(channel)[-1]
        return parent, teams.replies(channel, parent.ts)

    def page_link(parent) -> str:
        (link,) = set(re.findall(re.escape(PUBLIC) + r"/r/[^\s\"|>]+", json.dumps(parent.blocks)))
        return local(link, base)

    try:
        parent_a, replies_a = await digest_in(TEAM_A, CHAN_A, "UA1")
        medium = by_title(replies_a, MEDIUM_TITLE)
        button = buttons(medium)["digest_level_too_high"]
        before = len(teams.ephemerals)
        status, _ = await bot.sender(TEAM_A).block_action(
            "digest_level_too_high",
            value=button["value"],
            user="UA1",
            channel=CHAN_A,
            message_ts=medium.ts,
            thread_ts=medium.thread_ts,
        )
        assert status == 200
        await bot.chat.drain()
        assert "will be shown as 🟢 Low" in R.unescape(shown_eph(teams.ephemerals[before]))
        corrected = "Level corrected to 🟢 Low by <@UA1> (was 🟡 Medium)"
        assert corrected in shown(teams.message(CHAN_A, medium.ts))
        assert "🟡 medium 0 | 🟢 low 2" in shown(teams.message(CHAN_A, parent_a.ts))

        parent_b, replies_b = await digest_in(TEAM_B, CHAN_B, "UB1")
        assert "🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in shown(parent_b)
        assert all("Level corrected" not in shown(m) for m in (parent_b, *replies_b))
        async with aiohttp.ClientSession() as http:
            async with http.get(page_link(parent_b)) as resp:
                html_b = await resp.text()
            text_b = Page(html_b).text
            assert resp.status == 200 and "🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in text_b
            assert "Level corrected" not in text_b and "UA1" not in text_b

            # a tap on B's page is B's: B's page shows it, A's next digest does not
            high_sha = widgets.shas["high"]
            form = {**Forms(html_b).forms[high_sha], "dir": "too_high"}
            async with http.post(page_link(parent_b), data=form) as resp:
                assert resp.status == 200
                assert "high 0 | 🟡 medium 2" in Page(await resp.text()).text

        parent_a2, replies_a2 = await digest_in(TEAM_A, CHAN_A, "UA1")
        assert "🔴 high 1 | 🟡 medium 0 | 🟢 low 2" in shown(parent_a2)  # A's own correction, not B's
        assert "Level corrected" not in shown(by_title(replies_a2, HIGH_TITLE))
        assert corrected in "\n".join(shown(m) for m in replies_a2)
    finally:
        await pages.cleanup()


async def test_the_improve_pass_redraws_each_workspace_with_its_own_corrections(oauth_bot, teams, widgets, flaky_llm):
    """The same day posted in A and B, one commit's analysis failed; A's reader corrects another
    commit; the improve pass redraws both workspaces' messages: A's keep A's correction, B's show
    none of it."""
    from bot.render import slack as R
    from tests.shared.slack import HIGH_TITLE, MEDIUM_TITLE, buttons, by_title, shown_eph
    from tests.test_improve import LATER

    flaky_llm.fail(HIGH_TITLE, importance="medium", change_type="removal/deprecation")
    bot = await oauth_bot(teams, **flaky_llm.settings())
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    parents = {}
    for team, channel, user in ((TEAM_A, CHAN_A, "UA1"), (TEAM_B, CHAN_B, "UB1")):
        status, _ = await bot.sender(team).slash("2026-01-28", channel=channel, user=user)
        assert status == 200
        await bot.chat.drain()
        parents[team] = teams.top_level(channel)[-1]
    medium = by_title(teams.replies(CHAN_A, parents[TEAM_A].ts), MEDIUM_TITLE)
    before = len(teams.ephemerals)
    status, _ = await bot.sender(TEAM_A).block_action(
        "digest_level_too_high",
        value=buttons(medium)["digest_level_too_high"]["value"],
        user="UA1",
        channel=CHAN_A,
        message_ts=medium.ts,
        thread_ts=medium.thread_ts,
    )
    assert status == 200
    await bot.chat.drain()
    assert "will be shown as 🟢 Low" in R.unescape(shown_eph(teams.ephemerals[before]))

    flaky_llm.heal()
    ((_, outcome),) = await bot.chat.improver.tick(LATER)
    assert outcome == "1 of 1 improved"
    parent_a = teams.message(CHAN_A, parents[TEAM_A].ts)
    parent_b = teams.message(CHAN_B, parents[TEAM_B].ts)
    assert parent_a.edits >= 2 and parent_b.edits >= 1  # redrawn by the tap (A) and by the pass (both)
    assert "🔴 high 0 | 🟡 medium 2 | 🟢 low 1" in shown(parent_a)  # improved, and still A's correction
    assert "🔴 high 0 | 🟡 medium 3 | 🟢 low 0" in shown(parent_b)  # improved, and nobody's correction
    b_replies = [teams.message(CHAN_B, m.ts) for m in teams.replies(CHAN_B, parents[TEAM_B].ts)]
    assert all("Level corrected" not in shown(m) for m in (parent_b, *b_replies))
