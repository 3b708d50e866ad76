"""The Feishu adapter's own edges (handlers/feishu/adapter.py): the configuration an operator gets
a sentence about, the callback route's answers to what the SDK cannot read, and what `close()`
leaves behind. Real SDK → the fake Feishu on loopback; real Redis."""

from __future__ import annotations

import asyncio
import gc
import os
import threading

import pytest

from settings import ConfigError
from tests.fakes.feishu_server import message_event
from tests.shared.feishu import ENCRYPT_KEY, TOKEN, feishu_env, rocket_repo


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


def adapter_for(make_settings, **values):
    from handlers.feishu import build_feishu

    settings = make_settings(feishu_app_id="cli_config", feishu_app_secret="app-secret-for-tests", **values)
    return build_feishu(settings, None, receive=True)  # refused before any conversation is needed


@pytest.mark.parametrize(
    "given",
    [
        {"feishu_verification_token": TOKEN},
        {"feishu_encrypt_key": ENCRYPT_KEY},
        {"feishu_verification_token": "", "feishu_encrypt_key": ENCRYPT_KEY},
        {"feishu_verification_token": TOKEN, "feishu_encrypt_key": ""},
    ],
)
def test_http_callbacks_without_both_the_token_and_the_encrypt_key_are_a_configuration_error(make_settings, given):
    with pytest.raises(ConfigError) as caught:
        adapter_for(make_settings, feishu_mode="http", **given)
    sentence = str(caught.value)
    assert "FEISHU_VERIFICATION_TOKEN" in sentence and "FEISHU_ENCRYPT_KEY" in sentence
    assert "\n" not in sentence and "app-secret-for-tests" not in sentence


def test_a_feishu_domain_with_a_path_is_a_configuration_error(make_settings):
    with pytest.raises(ConfigError) as caught:
        adapter_for(make_settings, feishu_domain="https://open.feishu.cn/open-apis")
    assert "FEISHU_DOMAIN" in str(caught.value)


def test_a_sending_only_process_needs_no_callback_secrets_and_serves_no_route(make_settings):
    from handlers.feishu import build_feishu

    settings = make_settings(feishu_app_id="cli_config", feishu_app_secret="app-secret-for-tests", feishu_mode="http")
    adapter = build_feishu(settings, None, receive=False)  # e.g. the worker: it only sends
    assert adapter.http_routes() == []


@pytest.mark.parametrize("event", ["not an object", {"message": "not an object"}, {"sender": 5}])
async def test_a_signed_event_the_sdk_cannot_read_gets_a_400_and_does_nothing(make_settings, repo, event):
    async with feishu_env(make_settings, repo) as env:
        payload = message_event("@_user_1 digest 2026-01-28", token=TOKEN)
        payload["event"] = event
        status, body = await env.post(payload)
        assert (status, body) == (400, {"code": 400, "msg": "not handled"})  # not the SDK's own error text
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []


async def test_close_leaves_no_api_threads_behind(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.digest()  # the API threads have worked
        assert any(t.name.startswith("feishu-api") for t in threading.enumerate())
        await env.adapter.close()
        for _ in range(200):
            if not any(t.name.startswith("feishu-api") for t in threading.enumerate()):
                break
            await asyncio.sleep(0.01)
        assert not any(t.name.startswith("feishu-api") for t in threading.enumerate())


def long_connections() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feishu-ws"]


async def test_callbacks_over_http_open_no_long_connection(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:  # started in http mode
        assert long_connections() == []
        await env.adapter.start()  # started again (e.g. by a second runner): still none
        assert long_connections() == []
        assert env.fake.api_calls("/callback/ws/") == []


async def test_a_sending_only_process_opens_no_long_connection(make_settings, repo):
    from handlers.feishu import build_feishu

    async with feishu_env(make_settings, repo, mode="ws") as env:
        sending = build_feishu(env.adapter.settings, env.chat.router, receive=False)
        try:
            await sending.start()
            assert long_connections() == []
        finally:
            await sending.close()


async def test_a_long_connection_closed_by_feishu_is_opened_again(make_settings, repo):
    from tests.fakes.feishu_server import message_event as event
    from tests.shared.feishu import DM

    async with feishu_env(make_settings, repo, mode="ws") as env:
        await env.adapter.start()
        assert await asyncio.to_thread(env.fake.ws_connected.wait, 5), "the long connection never came up"
        assert all(t.daemon for t in long_connections())  # a hung connection never keeps the bot from exiting
        env.fake.ws_drop()  # Feishu moves the client elsewhere
        for _ in range(500):
            if env.fake.ws_connections == 2 and env.fake.ws_connected.is_set():
                break
            await asyncio.sleep(0.02)
        assert env.fake.ws_connections == 2 and env.fake.ws_connected.is_set(), "not reconnected"
        answer = await asyncio.to_thread(env.fake.ws_push, event("digest 2026-01-28", chat_id=DM, chat_type="p2p"))
        assert answer["code"] == 200
        await env.settle()
        assert len(env.fake.top_level(DM)) == 1  # events flow over the new connection


def open_event_loops() -> int:
    """Event loops holding an epoll descriptor in this process (each loop has one)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[eventpoll]"
        except OSError:
            pass
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc (Linux)")
async def test_reconnecting_the_long_connection_leaks_no_event_loop(make_settings, repo):
    from handlers.feishu import build_feishu

    async def connect_and_close() -> None:
        adapter = build_feishu(env.adapter.settings, env.chat.router, receive=True)
        await adapter.start()
        assert await asyncio.to_thread(env.fake.ws_connected.wait, 5), "the long connection never came up"
        await adapter.close()
        assert not any(t.name == "feishu-ws" for t in threading.enumerate())

    async with feishu_env(make_settings, repo, mode="ws") as env:
        await connect_and_close()  # the SDK's first import keeps a loop of its own for good
        gc.collect()
        gc.disable()  # a leaked loop is closed by the garbage collector at some point: not while counting
        try:
            before = open_event_loops()
            for _ in range(2):
                await connect_and_close()
            assert open_event_loops() == before  # a bot restarting its connection leaks nothing
        finally:
            gc.enable()
