"""Feishu/Lark store apps (FEISHU_APP_TYPE=store): the app_ticket, app and tenant tokens kept in
Redis for every process, events and sends per tenant — through lark-oapi against the fake Feishu
(tests/fakes/feishu_server.py), with a real Redis."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import aiohttp
import pytest

from bot.core import tenants
from bot.core.chat_platform import Notice
from bot.core.models import BotError, Subscription
from bot.delivery.spec import scheduled_spec
from bot.runtime.app import App
from bot.runtime.health import health_command
from bot.runtime.services import Services
from handlers.feishu.store_app import StoreApp
from handlers.web import bound_port, build_app, start_server
from settings import ConfigError, load_settings
from tests.fakes.feishu_server import FakeFeishu, card_action_event, mention, message_event, signed
from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder
from tests.shared.feishu import ALICE, ENCRYPT_KEY, TOKEN, callback_value, rocket_repo


@pytest.mark.parametrize(
    "overrides, says",
    [
        (dict(feishu_app_id="cli_a", feishu_app_secret="s"), "FEISHU_MODE=http"),
        (dict(feishu_mode="http", feishu_app_id="cli_a"), "FEISHU_APP_SECRET"),
    ],
)
def test_a_store_app_configured_wrongly_gets_one_sentence(overrides, says):
    with pytest.raises(ConfigError) as err:
        load_settings(feishu_app_type="store", **overrides)
    message = str(err.value)
    assert says in message and "\n" not in message and message.count(". ") == 0


def test_a_backup_never_holds_a_store_apps_ticket_or_tokens():
    from bot.backup.keys import kept

    for key in ("ticket", "app_token", "tenant_token:tk_a", "tenant_token:tk_a:flight"):
        assert not kept(f"p:feishu:isv:cli_a:{key}", "p:")
    assert not kept("p:health:platform:feishu", "p:")


def test_self_built_stays_the_default():
    assert load_settings(feishu_app_id="cli_a", feishu_app_secret="s").feishu_app_type == "self_built"


# --- a store app end to end -------------------------------------------------------------------------

TENANT_A, TENANT_B = "tk_aaaa0001", "tk_bbbb0002"
CHAT_A, CHAT_B = "oc_a0000000000000000000000000000001", "oc_b0000000000000000000000000000002"
BOB = "ou_bob00000000000000000000000000001"


@dataclass
class StoreEnv:
    fake: FakeFeishu
    chat: App
    adapter: Any
    url: str
    session: aiohttp.ClientSession
    settings: Any

    async def say(
        self, text: str, *, tenant: str | None, chat_id: str, sender: str = ALICE, root_id: str | None = None
    ) -> tuple[int, dict]:
        message_id = f"om_user{uuid.uuid4().hex[:16]}"
        self.fake.user_message(message_id, chat_id, "@_user_1 " + text, root_id)
        payload = message_event(
            "@_user_1 " + text,
            chat_id=chat_id,
            sender=sender,
            mentions=[mention("@_user_1", self.fake.bot_open_id, self.fake.bot_name, "bot")],
            message_id=message_id,
            root_id=root_id,
            thread_id="omt_x" if root_id else None,
            token=TOKEN,
            app_id=self.fake.app_id or "cli_fake",
            tenant_key=tenant,
        )
        body, headers = signed(payload, ENCRYPT_KEY)
        async with self.session.post(self.url, data=body, headers=headers) as resp:
            return resp.status, json.loads(await resp.text() or "{}")

    async def click(
        self, value: dict | None, *, tenant: str, message_id: str, form_value: dict | None = None, operator: str = ALICE
    ) -> tuple[int, dict]:
        payload = card_action_event(
            value,
            chat_id=CHAT_A,
            message_id=message_id,
            operator=operator,
            form_value=form_value,
            token=TOKEN,
            app_id=self.fake.app_id or "cli_fake",
            tenant_key=tenant,
        )
        body, headers = signed(payload, ENCRYPT_KEY)
        async with self.session.post(self.url, data=body, headers=headers) as resp:
            return resp.status, json.loads(await resp.text() or "{}")

    async def push_ticket(self) -> int:
        return await asyncio.to_thread(self.fake.push_app_ticket, self.url, ENCRYPT_KEY, TOKEN)

    async def settle(self) -> None:
        for _ in range(3):
            await asyncio.sleep(0.01)
            await self.chat.drain()

    def calls_to(self, chat_id: str) -> list:
        """Every call that named `chat_id` (a send to it, or a reply / edit of one of its messages)."""
        ids = {m.message_id for m in self.fake.messages if m.chat_id == chat_id}
        return [
            c
            for c in self.fake.calls
            if (isinstance(c.body, dict) and chat_id in (c.body.get("receive_id"), c.body.get("chat_id")))
            or any(i in c.path for i in ids)
        ]


@asynccontextmanager
async def store_env(make_settings, repo, *, ticket: bool = True, **overrides):
    app_id = "cli_" + uuid.uuid4().hex[:12]
    fake = FakeFeishu(app_id=app_id, app_secret="app-secret-for-tests", store=True).start()
    fake.install(TENANT_A, CHAT_A)
    fake.install(TENANT_B, CHAT_B)
    settings = make_settings(
        default_repo=str(repo.path),
        feishu_app_id=app_id,
        feishu_app_secret="app-secret-for-tests",
        feishu_domain=fake.url,
        feishu_mode="http",
        feishu_app_type="store",
        feishu_encrypt_key=ENCRYPT_KEY,
        feishu_verification_token=TOKEN,
        **overrides,
    )
    services = Services.build(settings)
    chat = App.build(services)
    from handlers.feishu import build_feishu

    adapter = build_feishu(settings, chat.router, receive=True)
    chat.register(adapter.platform)
    runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
    session = aiohttp.ClientSession()
    env = StoreEnv(fake, chat, adapter, f"http://127.0.0.1:{bound_port(runner)}/feishu/events", session, settings)
    try:
        await adapter.start()
        if ticket:
            assert await env.push_ticket() == 200
        yield env
    finally:
        await chat.drain()
        await session.close()
        await adapter.close()
        await runner.cleanup()
        await services.aclose()
        fake.stop()


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


async def health_platforms(settings, capsys) -> tuple[int, str]:
    code = await health_command(argparse.Namespace(kind="platforms"), settings)
    out = capsys.readouterr()
    return code, out.out + out.err


async def test_a_store_app_tenant_is_served_after_a_resent_ticket(make_settings, repo, capsys, caplog):
    async with store_env(make_settings, repo, ticket=False) as env:
        assert env.fake.resends == 1  # started without a ticket: Feishu was asked to resend it
        assert "waiting for Feishu to send an app_ticket" in caplog.text
        code, said = await health_platforms(env.settings, capsys)
        assert code == 1 and "waiting for Feishu to send an app_ticket" in said
        assert await env.push_ticket() == 200  # Feishu's push reaches the callback route, verified
        code, said = await health_platforms(env.settings, capsys)
        assert code == 0 and "app_ticket received" in said
        status, _ = await env.say("digest 2026-01-28", tenant=TENANT_A, chat_id=CHAT_A)
        assert status == 200
        await env.settle()
        (parent,) = env.fake.top_level(CHAT_A)
        assert "2026-01-28" in env.fake.card(parent)["header"]["title"]["content"]
        assert len(env.fake.thread(parent.message_id)) == 2
        sent = env.calls_to(CHAT_A)
        assert sent and {c.tenant for c in sent} == {TENANT_A} and all(c.status == 200 for c in sent)
        tickets = env.fake.token_calls("/app_access_token")
        assert [c.body["app_ticket"] for c in tickets] == [env.fake.ticket]


async def test_two_tenants_each_get_their_own_scheduled_push_with_their_own_token(make_settings, repo):
    async with store_env(make_settings, repo) as env:
        for tenant, chat_id in ((TENANT_A, CHAT_A), (TENANT_B, CHAT_B)):
            spec = scheduled_spec(
                env.chat.store,
                Subscription("feishu", tenants.qualify(tenant, chat_id), str(repo.path), lang="en"),
                date(2026, 1, 28),
            )
            assert await env.chat.deliveries.run(spec) == "delivered"
        for tenant, chat_id in ((TENANT_A, CHAT_A), (TENANT_B, CHAT_B)):
            (parent,) = env.fake.top_level(chat_id)
            assert len(env.fake.thread(parent.message_id)) == 2
            calls = env.calls_to(chat_id)
            assert calls and {c.tenant for c in calls} == {tenant}
        assert [c for c in env.fake.calls if c.code == 230002] == []  # 0 calls with another tenant's token
        tokens = env.fake.token_calls("/tenant_access_token")
        assert sorted(c.body["tenant_key"] for c in tokens) == [TENANT_A, TENANT_B]


async def test_tokens_are_refreshed_before_expiry_and_concurrent_callers_fetch_once(make_settings, repo):
    async with store_env(make_settings, repo) as env:
        first = env.adapter.store_app
        # a second process: its own adapter, the same Redis
        other = StoreApp(first.api, env.chat.store, first.app_id, first.app_secret)
        callers = [first, other] * 10
        got = await asyncio.gather(*(s.tenant_token(TENANT_A) for s in callers))
        assert len(set(got)) == 1
        assert len(env.fake.token_calls("/tenant_access_token")) == 1
        assert len(env.fake.token_calls("/app_access_token")) == 1
        # 25 minutes before the token's end: the next callers refresh it, once, before it expires
        offset = env.fake.token_life - 25 * 60
        env.fake.advance(offset)
        for s in (first, other):
            s.clock = lambda: time.time() + offset
        fresh = await asyncio.gather(*(s.tenant_token(TENANT_A) for s in callers))
        assert len(set(fresh)) == 1 and fresh[0] != got[0]
        assert len(env.fake.token_calls("/tenant_access_token")) == 2
        # past the old token's end, sends still go out (with the new one)
        env.fake.advance(30 * 60)
        for s in (first, other):
            s.clock = lambda: time.time() + offset + 30 * 60
        ref = await env.adapter.platform.send(tenants.qualify(TENANT_A, CHAT_A), Notice("hello", "info", "en"))
        assert ref.channel == tenants.qualify(TENANT_A, CHAT_A)
        assert [m.chat_id for m in env.fake.messages] == [CHAT_A]
        assert env.fake.calls[-1].status == 200 and env.fake.calls[-1].tenant == TENANT_A


async def test_an_event_naming_another_tenants_chat_cannot_reach_its_data(make_settings, repo, caplog):
    async with store_env(make_settings, repo) as env:
        await env.say("subscribe rocket at 09:30 lang en", tenant=TENANT_A, chat_id=CHAT_A)
        await env.settle()
        assert "09:30" in env.fake.text_of(env.fake.top_level(CHAT_A)[-1])
        before = len(env.fake.messages)
        # tenant B's (verified) event names A's chat: it is B's chat of that name, where B's bot is not
        await env.say("unsubscribe rocket", tenant=TENANT_B, chat_id=CHAT_A, sender=BOB)
        await env.say("list", tenant=TENANT_B, chat_id=CHAT_A, sender=BOB)
        await env.settle()
        assert len(env.fake.messages) == before and env.fake.ephemerals == []  # nothing reached A's chat
        assert [c for c in env.calls_to(CHAT_A) if c.tenant == TENANT_B and c.status == 200] == []
        # A's subscription is still there (B's unsubscribe named B's chat of that id, which has none)
        await env.say("list", tenant=TENANT_A, chat_id=CHAT_A)
        await env.settle()
        assert "09:30" in env.fake.ephemerals[-1]["card"]["elements"][0]["text"]["content"]
        # an event without a tenant_key: refused, one line, no call
        calls = len(env.fake.calls)
        caplog.clear()
        await env.say("list", tenant=None, chat_id=CHAT_A)
        await env.settle()
        assert len(env.fake.calls) == calls
        refused = [r for r in caplog.records if "without a tenant_key" in r.getMessage()]
        assert len(refused) == 1


async def test_a_tenants_card_buttons_are_answered_in_its_chat_and_another_tenant_reaches_nothing(make_settings, repo):
    async with store_env(make_settings, repo) as env:
        await env.say("digest 2026-01-28", tenant=TENANT_A, chat_id=CHAT_A)
        await env.settle()
        (parent,) = env.fake.top_level(CHAT_A)
        commit_message = env.fake.thread(parent.message_id)[0]
        ask = callback_value(env.fake.card(commit_message), "ask")
        status, _ = await env.click(ask, tenant=TENANT_A, message_id=commit_message.message_id)
        assert status == 200
        await env.settle()
        form_message = env.fake.thread(parent.message_id)[-1]
        submit = callback_value(env.fake.card(form_message), "ask_submit")
        await env.click(
            submit, tenant=TENANT_A, message_id=form_message.message_id, form_value={"question": "what breaks?"}
        )
        await env.settle()
        header, _answer = env.fake.thread(parent.message_id)[-2:]
        # the asker is tenant_key/ou_… inside the bot; Feishu's card mentions the bare open_id
        assert f"<at id={ALICE}></at>" in env.fake.text_of(header)
        assert {c.tenant for c in env.calls_to(CHAT_A)} == {TENANT_A}
        before = len(env.fake.messages)
        # tenant B's click names A's form message (its saved context) and A's chat: nothing of A's is read
        await env.click(
            None, tenant=TENANT_B, message_id=form_message.message_id, form_value={"question": "leak?"}, operator=BOB
        )
        await env.click(submit, tenant=TENANT_B, message_id=form_message.message_id, form_value={"question": "x"})
        await env.settle()
        assert len(env.fake.messages) == before and env.fake.ephemerals == []
        assert [c for c in env.calls_to(CHAT_A) if c.tenant == TENANT_B and c.status == 200] == []


async def test_a_forged_or_foreign_app_ticket_is_refused_and_not_kept(make_settings, repo):
    async with store_env(make_settings, repo, ticket=False) as env:

        async def post(payload: dict, key: str = ENCRYPT_KEY) -> int:
            body, headers = signed(payload, key)
            async with env.session.post(env.url, data=body, headers=headers) as resp:
                return resp.status

        def ticket_event(app_id: str, token: str = TOKEN) -> dict:
            event = {"app_id": app_id, "app_ticket": "ticket-forged", "type": "app_ticket"}
            return {"uuid": uuid.uuid4().hex, "token": token, "ts": "1", "type": "event_callback", "event": event}

        own = env.fake.app_id or ""
        assert await post(ticket_event(own), key="not-the-encrypt-key") == 400  # cannot be decrypted
        assert await post(ticket_event(own, token="wrong-verification-token")) == 401
        assert await post(ticket_event("cli_someoneelse")) == 400  # another app's ticket
        assert await env.adapter.store_app.ticket() is None
        with pytest.raises(BotError) as err:  # no ticket: a send is one sentence, not a token fetch
            await env.adapter.platform.send(tenants.qualify(TENANT_A, CHAT_A), Notice("hello", "info", "en"))
        assert "app_ticket" in str(err.value) and env.fake.token_calls("_access_token") == []
        assert env.fake.resends == 1  # asked at start; asking again waits RESEND_EVERY


async def test_a_question_in_a_tenants_thread_streams_its_answer_with_that_tenants_token(make_settings, repo):
    def respond(request):
        if request.get("stream"):
            chunks = ["The cache fix ", "compares expiry ", "with <= instead ", "of <, so entries ", "live less."]
            return Reply(chunks=chunks, chunk_delay=0.15)
        return default_responder(request)

    with FakeOpenAI(respond) as llm:
        async with store_env(make_settings, repo, openai_base_url=llm.url, openai_api_key="sk-test") as env:
            await env.say("digest 2026-01-28", tenant=TENANT_A, chat_id=CHAT_A)
            await env.settle()
            (parent,) = env.fake.top_level(CHAT_A)
            await env.say("what does the cache fix change?", tenant=TENANT_A, chat_id=CHAT_A, root_id=parent.message_id)
            await env.settle()
            answer = env.fake.thread(parent.message_id)[-1]
            entity = env.fake.cards[json.loads(answer.content)["data"]["card_id"]]
            assert len(entity.history) >= 2 and "compares expiry" in entity.history[-1][1]
            assert entity.tenant == TENANT_A and entity.settings  # streamed and closed with A's token
            cardkit = env.fake.api_calls("/open-apis/cardkit/")
            assert cardkit and {c.tenant for c in cardkit} == {TENANT_A} and all(c.status == 200 for c in cardkit)
