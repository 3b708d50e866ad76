"""Answers without an LLM, as a user sees them (issue 33 §4): which parts of a commit's diff a
question in a digest's thread is answered with — in the terminal chat, in Slack (signed requests
into the real endpoint, the real SDK against the fake Slack) and in Feishu (signed callbacks, the
real SDK against the fake Feishu OpenAPI) — a Chinese question about a period finding English
commits, and "Which commit?" picked by its number in the terminal. Real Redis, a real git
repository, offline analyses."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from bot.render import slack as R
from tests.gitrepo import GitRepo
from tests.shared.console import SH
from tests.shared.feishu import feishu_env
from tests.shared.history_cli import history_run, sources
from tests.shared.slack import CHANNEL, digest_thread

# A chat adapter as a real commit adds one: a module of small functions, one of which retries a
# 429, and an end-to-end test file that opens with imports, fixtures and a polling helper.
RELAY = '''"""Relay, as a thin adapter: events in, cards out."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import time
from dataclasses import dataclass

import aiohttp

MAX_RETRIES = 5
CARD_LIMIT = 30_000
TITLE_LIMIT = 100


class RelayError(Exception):
    """A Relay API call failed for good."""


@dataclass
class Pacer:
    """At most `per_second` posts a second to one chat."""

    per_second: float = 1.0
    last: float = 0.0

    async def wait(self) -> None:
        gap = 1.0 / self.per_second - (time.monotonic() - self.last)
        if gap > 0:
            await asyncio.sleep(gap)
        self.last = time.monotonic()


def render_card(title: str, body: str) -> dict:
    card = {"header": {"title": format_title(title)}, "elements": []}
    for paragraph in body.split("\\n\\n"):
        card["elements"].append({"tag": "markdown", "content": paragraph})
    if len(json.dumps(card)) > CARD_LIMIT:
        card["elements"] = card["elements"][:1]
    return card


def format_title(title: str) -> str:
    title = " ".join(title.split())
    if len(title) > TITLE_LIMIT:
        title = title[: TITLE_LIMIT - 1] + "…"
    return title


def split_text(text: str, size: int) -> list[str]:
    pieces = []
    while text:
        pieces.append(text[:size])
        text = text[size:]
    return pieces


def verify_signature(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    expected = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def parse_event(raw: bytes) -> dict:
    event = json.loads(raw)
    if event.get("type") == "url_verification":
        return {"challenge": event["challenge"]}
    return event.get("event", {})


async def send_with_retries(session: aiohttp.ClientSession, url: str, payload: dict) -> dict:
    """POST `payload`; a 429 waits Retry-After and tries again, at most MAX_RETRIES times."""
    for attempt in range(MAX_RETRIES + 1):
        async with session.post(url, json=payload) as resp:
            if resp.status != 429:
                return await resp.json()
            wait = float(resp.headers.get("Retry-After", "1"))
        if attempt == MAX_RETRIES:
            raise RelayError(f"still rate limited after {MAX_RETRIES} retries")
        await asyncio.sleep(wait + random.uniform(0, 0.1))
    raise RelayError("unreachable")


class RelayPlatform:
    def __init__(self, session: aiohttp.ClientSession, base_url: str):
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.pacers: dict[str, Pacer] = {}

    async def post(self, chat: str, title: str, body: str) -> dict:
        pacer = self.pacers.setdefault(chat, Pacer())
        await pacer.wait()
        card = render_card(title, body)
        return await send_with_retries(self.session, f"{self.base_url}/messages", {"chat": chat, "card": card})

    async def edit(self, message_id: str, title: str, body: str) -> dict:
        card = render_card(title, body)
        async with self.session.patch(f"{self.base_url}/messages/{message_id}", json={"card": card}) as resp:
            return await resp.json()

    async def delete(self, message_id: str) -> None:
        async with self.session.delete(f"{self.base_url}/messages/{message_id}") as resp:
            if resp.status >= 400:
                raise RelayError(f"could not delete {message_id}: HTTP {resp.status}")
'''

RELAY_TESTS = '''"""Relay end to end: the adapter against a fake Relay API on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager

import aiohttp
import pytest
from aiohttp import web

from handlers.relay import RelayPlatform, render_card, verify_signature

SECRET = "relay-secret-for-tests"
CHAT = "chat-0001"


class FakeRelay:
    def __init__(self):
        self.calls: list[dict] = []
        self.refusals: list[tuple[int, str]] = []

    def answer_429(self, times: int, retry_after: str) -> None:
        self.refusals = [(429, retry_after)] * times

    async def handle(self, request: web.Request) -> web.Response:
        self.calls.append(await request.json())
        if self.refusals:
            status, after = self.refusals.pop(0)
            return web.json_response({"error": "rate_limited"}, status=status, headers={"Retry-After": after})
        return web.json_response({"ok": True, "id": f"m{len(self.calls)}"})


@asynccontextmanager
async def serving(fake: FakeRelay):
    app = web.Application()
    app.router.add_post("/messages", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
async def relay():
    fake = FakeRelay()
    async with serving(fake) as url, aiohttp.ClientSession() as session:
        yield fake, RelayPlatform(session, url)


async def eventually(check, seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            break
        await asyncio.sleep(0.01)
    assert check()


def test_a_card_keeps_its_first_paragraph_when_too_big():
    card = render_card("t", "a" * 40_000 + "\\n\\nb")
    assert len(card["elements"]) == 1


def test_a_forged_signature_is_refused():
    assert not verify_signature(SECRET, "1", b"{}", "0" * 64)


async def test_a_429_is_retried_after_retry_after(relay):
    fake, platform = relay
    fake.answer_429(times=2, retry_after="0.01")
    answer = await platform.post(CHAT, "title", "body")
    assert answer["ok"] and len(fake.calls) == 3
    await eventually(lambda: json.dumps(fake.calls[-1]).count("title") == 1)
'''

BRIDGE = '''"""Feishu callbacks: the signature checked, the card's action read."""

import hashlib


def check_signature(timestamp: str, nonce: str, key: str, body: str, signature: str) -> bool:
    return hashlib.sha256((timestamp + nonce + key + body).encode()).hexdigest() == signature


def card_action(event: dict) -> dict:
    return event.get("action", {}).get("value", {})
'''


def relay_repo(path) -> GitRepo:
    """2026-01-28 in Shanghai: the Relay adapter (code and its tests, both new), the Feishu
    adapter's callbacks, a scheduler change and a docs fix — English titles, as commits are."""
    r = GitRepo(path, bare_origin="https://github.com/acme/relay.git")
    at = lambda h: datetime(2026, 1, 28, h, 0, tzinfo=SH)  # noqa: E731
    r.commit("init", {"README.md": "relay\n", "bot/scheduler.py": "def tick():\n    return 1\n"}, when=at(8))
    r.shas = {
        "relay": r.commit(
            "Relay adapter: message cards, per-chat pacing and 429 retries; end-to-end tests",
            {"handlers/relay.py": RELAY, "tests/test_relay.py": RELAY_TESTS},
            when=at(10),
        ),
        "feishu": r.commit(
            "Feishu adapter: card callbacks and signature checks",
            {"handlers/feishu_bridge.py": BRIDGE},
            when=at(11),
        ),
        "scheduler": r.commit(
            "Scheduler: tick every second", {"bot/scheduler.py": "def tick():\n    return 2\n"}, when=at(12)
        ),
        "docs": r.commit("docs: fix a typo in the README", {"README.md": "relay bot\n"}, when=at(13)),
    }
    return r


@pytest.fixture
def repo(tmp_path) -> GitRepo:  # the console's repository (tests/shared/console.py)
    return relay_repo(tmp_path / "relay")


@pytest.fixture
def widgets(repo) -> GitRepo:  # the Slack bot's repository (tests/shared/slack.py)
    return repo


# --- what an answer shows --------------------------------------------------------------------------


def diff_of(answer: str) -> str:
    """The fenced diff of an answer, without its closing list of files not shown."""
    fenced = answer.split("```diff", 1)[1].split("```", 1)[0]
    return re.split(r"^(?:Not shown|未显示)", fenced, maxsplit=1, flags=re.M)[0]


def files_shown(answer: str) -> list[str]:
    """The files whose lines the answer shows, in the order it shows them (each once)."""
    return list(dict.fromkeys(re.findall(r"^### (\S+)", diff_of(answer), re.M)))


def not_shown(answer: str) -> str:
    fenced = answer.split("```diff", 1)[1].split("```", 1)[0]
    parts = re.split(r"^(?:Not shown|未显示)", fenced, maxsplit=1, flags=re.M)
    return parts[1] if len(parts) > 1 else ""


def diff_lines(answer: str) -> int:
    return sum(1 for line in diff_of(answer).splitlines() if line.startswith(("+", "-", " ")))


RETRY_QUESTIONS = [
    ("en", "how does the relay adapter retry a 429?"),
    ("zh", "relay 适配器的 429 重试会出什么问题？"),
]


def assert_the_retry_code_then_its_test(answer: str) -> None:
    """The function that retries, before the test of it; nothing unrelated, no imports, short."""
    assert files_shown(answer)[0] == "handlers/relay.py", answer
    assert "tests/test_relay.py" in files_shown(answer), answer
    shown = diff_of(answer)
    assert "async def send_with_retries(" in shown and 'resp.headers.get("Retry-After", "1")' in shown
    assert "def test_a_429_is_retried_after_retry_after(relay):" in shown
    assert shown.index("send_with_retries(") < shown.index("def test_a_429_is_retried")
    for unrelated in (
        "def render_card(",
        "def verify_signature(",
        "def split_text(",
        "import aiohttp",
        "import pytest",
    ):
        assert unrelated not in shown, unrelated
    assert "handlers/relay.py" not in not_shown(answer)
    assert diff_lines(answer) <= 80


# --- the terminal ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_readmes_question_shows_the_main_code_not_a_tests_imports(console_in, repo, lang):
    """`reply 1 what could <sha> break?`: no word of it is in the diff; the answer says so and
    shows the commit's code — not the imports and fixtures of its test file."""
    console = await console_in(lang)
    await console("/digest 2026-01-28")
    sha = repo.shas["relay"][:7]
    answer = await console(f"reply 1 what could {sha} break?")
    said = {
        "en": [
            f"the diff of {sha} names nothing the question asks about; here are its main code changes:",
            "Every one of its 2 changed files is new: it changes no existing line.",
            "- tests/test_relay.py (not about the question)",
        ],
        "zh": [
            f"提交 {sha} 的改动里没有找到问题所问的内容，以下是它主要的代码改动：",
            "它改动的 2 个文件都是新文件：没有改动任何已有的代码行。",
            "- tests/test_relay.py（与问题无关）",
        ],
    }[lang]
    for line in said:
        assert line in answer, answer
    assert files_shown(answer) == ["handlers/relay.py"]
    shown = diff_of(answer)
    assert "import pytest" not in shown and "@pytest.fixture" not in shown and "import aiohttp" not in shown
    assert "def " in shown and 0 < diff_lines(answer) <= 80


@pytest.mark.parametrize("lang,question", RETRY_QUESTIONS)
async def test_a_question_is_answered_with_the_code_it_names_before_its_test(console_in, lang, question):
    console = await console_in(lang)
    await console("/digest 2026-01-28")
    answer = await console(f"reply 1 {question}")
    intro = {"en": "most relevant to the question", "zh": "与问题最相关的代码片段"}[lang]
    assert intro in answer
    assert_the_retry_code_then_its_test(answer)


@pytest.mark.parametrize(
    "lang,hint",
    [
        ("en", "Pick one by its number: `reply 1 1` answers the question about the first"),
        ("zh", "用编号选择：`reply 1 1` 就回答关于第 1 个提交的问题"),
    ],
)
async def test_which_commit_is_a_numbered_choice_picked_with_reply_n_k(console_in, repo, lang, hint):
    console = await console_in(lang)
    await console("/digest 2026-01-28")
    choice = await console("reply 1 what do the adapter changes risk?")  # both adapters' titles say "adapter"
    listed = re.findall(r"^\s+(\d+)\. ([0-9a-f]{7}) ", choice, re.M)
    assert len(listed) >= 2 and [n for n, _ in listed] == [str(i) for i in range(1, len(listed) + 1)], choice
    assert hint in choice
    second = listed[1][1]
    answer = await console("reply 1 2")
    first_line = answer.strip().splitlines()[0]
    assert second in first_line and ("LLM" in first_line), answer  # the answer about the second choice
    assert "```diff" in answer and not re.search(r"^\s+\d+\. [0-9a-f]{7} ", answer, re.M)  # not asked again


async def test_a_chinese_period_question_finds_the_english_feishu_commit_as_the_english_one_does(console_in, repo):
    console = await console_in("zh")
    for question in ("飞书适配器有什么改动？", "what changed in the Feishu adapter?"):
        answer = await console(f"ask 2026-01-27..2026-01-28 {question}")
        assert "没有相关的提交" not in answer, answer
        assert sources(answer)[0] == repo.shas["feishu"][:7], answer


# --- the CLI -----------------------------------------------------------------------------------------


def test_the_cli_answers_a_chinese_period_question_with_the_feishu_commit(redis_url, tmp_path):
    repo = relay_repo(tmp_path / "relay")
    run = history_run(redis_url, tmp_path)
    period = ("--since", "2026-01-27", "--until", "2026-01-28", "--tz", "Asia/Shanghai")
    proc = run("ask", "--repo", str(repo.path), *period, "--lang", "zh", "飞书适配器有什么改动？")
    assert proc.returncode == 0, proc.stderr
    assert sources(proc.stdout)[0] == repo.shas["feishu"][:7], proc.stdout


# --- Slack and Feishu --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang,question", RETRY_QUESTIONS)
async def test_slack_answers_a_thread_question_with_the_code_it_names(make_bot, slack, lang, question):
    bot = await make_bot(default_lang=lang)
    parent, _ = await digest_thread(bot, slack)
    status, _ = await bot.sender.event(
        bot.sender.message_event(f"<@UBOT> {question}", kind="app_mention", thread_ts=parent.ts)
    )
    assert status == 200
    await bot.settle()
    answer = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1]
    assert_the_retry_code_then_its_test(R.unescape(answer.text))


@pytest.mark.parametrize("lang,question", RETRY_QUESTIONS)
async def test_feishu_answers_a_thread_question_with_the_code_it_names(make_settings, repo, lang, question):
    async with feishu_env(make_settings, repo, default_lang=lang) as env:
        parent, _ = await env.digest()
        await env.say(question, root_id=parent.message_id)
        await env.settle()
        answer = env.fake.thread(parent.message_id)[-1]
        assert_the_retry_code_then_its_test(env.fake.shown(answer))
