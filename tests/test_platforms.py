"""Every chat platform implements every member of ChatPlatform — the core calls them without
probing (no getattr), so a missing one would only show up as an AttributeError in production."""

import inspect

import pytest

from bot.core.chat_platform import ChatPlatform
from handlers.console import ConsolePlatform
from handlers.feishu.platform import FeishuPlatform
from handlers.slack.platform import SlackPlatform

MEMBERS = {name for name in dir(ChatPlatform) if not name.startswith("_")} | set(ChatPlatform.__annotations__)


def test_the_protocol_declares_what_the_core_uses():
    assert {
        "send",
        "send_unless_posted",
        "update",
        "reply_private",
        "stream",
        "upload",
        "config_caveat",
        "name",
        "supports_files",
        "send_dedupe_window",
    } <= MEMBERS


@pytest.mark.parametrize("platform", [ConsolePlatform, SlackPlatform, FeishuPlatform])
def test_each_platform_implements_every_member_with_the_same_parameters(platform):
    for name in sorted(MEMBERS):
        assert hasattr(platform, name), f"{platform.__name__} lacks {name}"
        declared = getattr(ChatPlatform, name, None)
        if callable(declared):
            implemented = getattr(platform, name)
            assert inspect.iscoroutinefunction(implemented), f"{platform.__name__}.{name} must be async"
            want = list(inspect.signature(declared).parameters)
            have = list(inspect.signature(implemented).parameters)
            assert have == want, f"{platform.__name__}.{name}{have} differs from the protocol's {want}"
