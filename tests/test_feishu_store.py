"""Feishu/Lark store apps (FEISHU_APP_TYPE=store): the app_ticket, app and tenant tokens kept in
Redis for every process, events and sends per tenant — through lark-oapi against the fake Feishu
(tests/fakes/feishu_server.py), with a real Redis."""

from __future__ import annotations

import pytest

from settings import ConfigError, load_settings


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


def test_self_built_stays_the_default():
    assert load_settings(feishu_app_id="cli_a", feishu_app_secret="s").feishu_app_type == "self_built"
