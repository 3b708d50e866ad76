"""Level corrections in the terminal chat, typed as a user types them: `level N too-high|too-low
[sha]` on a posted digest message, and what the terminal shows afterwards (also after a restart:
a new bot on the same Redis)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.shared.console import NOW, console_repo


@pytest.fixture
def repo(tmp_path):
    return console_repo(tmp_path)


async def test_level_commands_correct_and_redraw(console, make_settings, repo):
    shown = await console("/digest 2026-01-28")
    assert "🔴 high 1 | 🟡 medium 0 | 🟢 low 2" in shown
    assert "↳ [#2 in #1] 🔴" in shown and "↳ [#3 in #1] 🟢 Low importance (2)" in shown

    said = await console("level 2 too-high")
    assert "(only you) ✅ Recorded: " in said and "Remove the legacy exporter (#41) will be shown as 🟡 Medium" in said
    assert "↳ [#2 in #1] (updated) 🟡 " in said
    assert "✏️ Level corrected to 🟡 Medium by you (was 🔴 High)" in said
    assert "[#1] (updated) Daily update report" in said and "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in said

    which = await console("level 3 too-low")  # #3 lists two commits: which one?
    assert "Message #3 lists several commits: name one, e.g. level 3 too-low " in which
    low_line = next(x for x in shown.splitlines() if "Fix typo in README" in x)
    typo = low_line.split()[1]
    assert "already at the lowest level (🟢 Low): nothing recorded." in await console(f"level 3 too-high {typo}")
    raised = await console(f"level 3 too-low {typo}")
    assert "will be shown as 🟡 Medium from now on." in raised
    assert (
        f"🟡 {typo} [Docs] Fix typo in README" in raised
        and "Level corrected to 🟡 Medium by you (was 🟢 Low)" in raised
    )

    assert "usage: level N too-high|too-low [sha]" in await console("level 2 sideways")
    assert "There is no message #9 yet." in await console("level 9 too-high")
    week = await console("/digest week 2026-01-28")  # a roll-up: corrected, but no level taps of its own
    number = week.split("]", 1)[0].lstrip("[#")
    assert "Level corrected to 🟡 Medium by you (was 🔴 High)" in week
    assert f"Message #{number} shows no commit whose level can be corrected." in await console(
        f"level {number} too-low"
    )
    again = await console("/digest 2026-01-28")  # the next listing of that day
    assert "🔴 high 0 | 🟡 medium 2 | 🟢 low 1" in again
    assert "Level corrected to 🟡 Medium by you (was 🔴 High)" in again
    assert "Level corrected to 🟡 Medium by you (was 🟢 Low)" in again

    # the same person again: the latest wins (medium → low)
    latest = await console("level 2 too-high")
    assert "will be shown as 🟢 Low" in latest and "Level corrected to 🟢 Low by you (was 🔴 High)" in latest

    # a restart: a new bot process (new Services, new console) on the same Redis
    services = Services.build(make_settings(default_repo=str(repo.path), default_lang="en"), clock=lambda: NOW)
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    try:
        await ConsoleChat(chat.router, platform).handle("/digest 2026-01-28")
        await chat.drain()
        assert "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in out.getvalue()
        assert "Level corrected to 🟢 Low by you (was 🔴 High)" in out.getvalue()
    finally:
        await services.aclose()


async def test_help_lists_the_terminal_s_own_commands(console):
    shown = await console("help")
    assert "level N too-high|too-low [sha]" in shown and "reply N <question>" in shown
