"""The clock with the real queue (arq on Redis) at a fixed time."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from bot.runtime.app import App
from bot.runtime.queue import Jobs
from bot.runtime.services import Services
from handlers.console import ConsolePlatform

UTC = UTC
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai


@pytest.fixture
async def clock_chat(make_settings, tmp_path):
    settings = make_settings(default_repo=str(tmp_path), default_lang="en", catchup_minutes=60)
    services = Services.build(settings, clock=lambda: NOW)
    chat = App.build(services, {"console": ConsolePlatform(out=io.StringIO())}, clock=lambda: NOW)
    jobs = await Jobs.connect(settings)
    yield chat, settings, jobs
    await jobs.close()
    await services.aclose()
