"""Secrets never reach the LLM (issue 12): bot/redact/ on our own labelled corpus, and end to
end — a repository whose commits add every positive case, digested through the real CLI against
the fake LLM endpoint that records every request; a thread question and its history, asked in
the terminal chat. Nothing of a positive may appear in anything the endpoint received."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.core import metrics
from bot.redact import redact, redactor, vendor_names
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.data.secrets_corpus import negatives, positives, rnd
from tests.fakes.openai_server import FakeOpenAI
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
POSITIVES = positives()
NEGATIVES = negatives()


@pytest.mark.parametrize("label,line,secret", POSITIVES, ids=[p[0] for p in POSITIVES])
def test_each_positive_is_withheld_and_marked(label, line, secret):
    result = redact(line)
    assert secret not in result.text
    assert "[REDACTED:" in result.text and result.count >= 1
    assert sum(result.kinds.values()) == result.text.count("[REDACTED:")


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_code_is_left_alone(text):
    result = redact(text)
    assert (result.text, result.count) == (text, 0)


def test_github_actions_permission_is_not_a_token():
    assert redact("permissions:\n  id-token: write\n").text == "permissions:\n  id-token: write\n"


def test_a_vendor_s_rules_can_be_left_out_and_the_generic_detectors_still_work():
    """bench/eval_secrets.py's leave-one-vendor-out: redactor() drops the rules written for a
    vendor, table rows included; what is left must still catch a token in a credential context."""
    aws = next(p for p in POSITIVES if p[0] == "aws access key id")[2]
    assert aws not in redact(f"see {aws}").text
    assert redactor(["aws"])(f"see {aws}").text == f"see {aws}"  # only the AWS rule knew this shape
    token = "dp." + "pt." + rnd(43, seed=90)  # a Doppler row of a table rule
    assert redactor(["doppler"])(f"env: {token}").text == "env: [REDACTED:api-token]"  # the generic prefix rule
    assert token not in redactor(vendor_names())(f"DOPPLER_TOKEN={token}").text  # no vendor rule at all
    assert {"aws", "github", "doppler"} <= vendor_names()


def test_marks_name_the_kind_and_are_stable():
    line = 'password = "correct horse battery staple"\nstripe.api_key = "sk' + "_live_" + '4eC39HqLyjWDarjtT1zdp7dc"'
    first = redact(line)
    assert first.text == 'password = "[REDACTED:password]"\nstripe.api_key = "[REDACTED:stripe-key]"'
    assert dict(first.kinds) == {"password": 1, "stripe-key": 1}
    assert redact(first.text).count == 0  # redacting twice changes nothing


# =============================================================================================
# End to end through the CLI
# =============================================================================================


@pytest.fixture
def leaky_repo(tmp_path):
    """Commits that add every positive: in files (one per case), in a commit message, and in a
    file name; each commit also changes ordinary code that must reach the model intact."""
    repo = GitRepo(tmp_path / "leaky")
    when = datetime(2026, 1, 28, 9, 0, tzinfo=SH)
    half = len(POSITIVES) // 2
    for part, cases in enumerate((POSITIVES[:half], POSITIVES[half:])):
        files = {f"config/case_{part}_{i}.txt": line + "\n" for i, (_, line, _) in enumerate(cases)}
        files[f"src/app_{part}.py"] = "def handler(event):\n    return event['ok']\n"
        repo.commit(f"chore: settings batch {part}", files, when=when.replace(hour=9 + part))
    _label, line, _secret = next(p for p in POSITIVES if p[0] == "log line Using Key=")
    repo.commit(
        f"fix: retry login\n\nThe job printed: {line}", {"src/retry.py": "RETRIES = 3\n"}, when=when.replace(hour=12)
    )
    gh = next(p for p in POSITIVES if p[0] == "github token")[2]
    repo.commit("chore: add a file whose name leaks", {f"keys/{gh}.txt": "x\n"}, when=when.replace(hour=13))
    return repo


@pytest.fixture
def run_cli(redis_url, tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"red{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
        }
    )

    def invoke(*args: str, extra: dict) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            cwd=tmp_path,
            timeout=180,
        )

    return invoke


def _sent(llm: FakeOpenAI) -> str:
    return "\n".join(m["content"] for r in llm.requests for m in r["messages"])


def test_digest_sends_no_secret_to_the_llm(run_cli, leaky_repo):
    with FakeOpenAI() as llm:
        proc = run_cli(
            "digest",
            "--repo",
            str(leaky_repo.path),
            "--date",
            "2026-01-28",
            "--lang",
            "en",
            extra={"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test-redact-0000000000"},
        )
    assert proc.returncode == 0, proc.stderr
    sent = _sent(llm)
    assert len(llm.requests) >= 5  # four commits and the day's headline
    leaked = [label for label, _, secret in POSITIVES if secret in sent]
    assert leaked == []
    assert "def handler(event):" in sent and "RETRIES = 3" in sent  # ordinary code still goes
    assert "keys/[REDACTED:github-token].txt" in sent
    assert "The job printed: 2026-01-28 10:00:01 INFO Using Key=[REDACTED:" in sent
    # the model is told how many values were withheld from each commit
    batch = next(
        r["messages"][-1]["content"] for r in llm.requests if "chore: settings batch 0" in r["messages"][-1]["content"]
    )
    told = re.search(r"(\d+) secret-looking value\(s\) in the commit's text and diff", batch)
    assert told and int(told.group(1)) >= len(POSITIVES) // 2


def test_question_and_history_send_no_secret(run_cli, leaky_repo):
    sha = leaky_repo.git("rev-parse", "HEAD~1").strip()  # the commit whose message leaks
    key = next(p for p in POSITIVES if p[0] == "stripe key")[2]
    with FakeOpenAI() as llm:
        llm.responder = lambda req: "It retries the login three times."
        proc = run_cli(
            "ask",
            "--repo",
            str(leaky_repo.path),
            "--commit",
            sha,
            "--lang",
            "en",
            f"is it safe that someone pasted {key} here?",
            extra={"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test-redact-0000000000"},
        )
    assert proc.returncode == 0, proc.stderr
    sent = _sent(llm)
    assert key not in sent and "is it safe that someone pasted [REDACTED:stripe-key] here?" in sent
    assert all(secret not in sent for _, _, secret in POSITIVES)
    assert "It retries the login three times." in proc.stdout


# =============================================================================================
# A thread in the terminal chat: the question, the thread's history, and the metrics
# =============================================================================================


async def test_thread_questions_and_history_are_redacted_and_counted(make_settings, leaky_repo):
    now = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)
    telegram = next(p for p in POSITIVES if p[0] == "telegram bot token")[2]
    password_line = next(p for p in POSITIVES if p[0] == "password with spaces")[1]
    before = _redactions_by_kind()
    with FakeOpenAI() as llm:
        llm.responder = _answer_questions
        services = Services.build(
            make_settings(
                default_repo=str(leaky_repo.path),
                default_lang="en",
                openai_base_url=llm.url,
                openai_api_key="sk-test-redact-0000000000",
            ),
            clock=lambda: now,
        )
        out = io.StringIO()
        platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
        chat = App.build(services, {"console": platform}, clock=lambda: now)
        typed = ConsoleChat(chat.router, platform)
        try:
            for line in (
                "/digest 2026-01-28",
                f"reply 1 why retry login? the bot token is {telegram}",
                f"reply 1 and for retry login, is {password_line} fine?",
            ):
                await typed.handle(line)
                await chat.drain()
        finally:
            await services.aclose()
    shown = out.getvalue()
    assert "Answer about the commit." in shown  # the questions were answered in the thread
    questions = [r for r in llm.requests if r.get("stream")]
    assert len(questions) == 2
    follow_up = questions[-1]["messages"][-1]["content"]
    assert "why retry login? the bot token is [REDACTED:telegram-bot-token]" in follow_up  # the history
    assert 'is password = "[REDACTED:password]" fine?' in follow_up
    sent = _sent(llm)
    assert telegram not in sent and "correct horse battery staple" not in sent
    assert all(secret not in sent for _, _, secret in POSITIVES)
    after = _redactions_by_kind()
    assert after.get("telegram-bot-token", 0) - before.get("telegram-bot-token", 0) >= 2  # asked, then history
    assert after.get("github-token", 0) > before.get("github-token", 0)  # the digest's file name


def _answer_questions(request: dict):
    if request.get("stream"):
        return "Answer about the commit."
    from tests.fakes.openai_server import default_responder

    return default_responder(request)


def _redactions_by_kind() -> dict[str, float]:
    """digestbot_redactions_total as /metrics serves it, by kind."""
    text = metrics.exposition()[0].decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("digestbot_redactions_total{"):
            labels, value = line.rsplit(" ", 1)
            kind = labels.split('kind="', 1)[1].split('"', 1)[0]
            out[kind] = float(value)
    return out
