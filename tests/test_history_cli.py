"""`python -m bot ask` without --commit, as a user runs it: a real process, real Redis, a real git
repository, the fake LLM endpoint where an LLM answers."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder
from tests.gitrepo import GitRepo
from tests.shared.history_cli import history_run, one_clear_line, sources


@pytest.fixture
def run(redis_url, tmp_path):
    return history_run(redis_url, tmp_path)


SH = ZoneInfo("Asia/Shanghai")
PERIOD = ("--since", "2026-01-19", "--until", "2026-01-25", "--tz", "Asia/Shanghai")


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> GitRepo:
    r = GitRepo(tmp_path_factory.mktemp("engine") / "engine")
    at = lambda d, h=10: datetime(2026, 1, d, h, 0, tzinfo=SH)  # noqa: E731
    r.commit(
        "init", {"vllm/core/scheduler.py": "def schedule():\n    return []\n", "README.md": "engine\n"}, when=at(10)
    )
    r.shas = {
        "sched": r.commit(
            "Preempt lower-priority requests earlier (#101)\n\nThe running queue is checked first.",
            {
                "vllm/core/scheduler.py": "def schedule():\n    return []\n\n\n"
                "def _schedule_running(queue):\n    return sorted(queue)\n"
            },
            when=at(19),
        ),
        "rocm": r.commit(
            "[ROCm] Add FP8 GEMM kernels for MI300 (#102)",
            {"vllm/platforms/rocm.py": "FP8 = True\n", "csrc/rocm/fp8_gemm.cu": "// kernel\n"},
            when=at(20),
        ),
        "docs": r.commit("docs: fix typos in the quickstart", {"README.md": "engine, fast\n"}, when=at(21)),
        "attn": r.commit(
            "Refactor FlashAttentionBackend metadata builder",
            {"vllm/attention/backends/flash_attn.py": "class FlashAttentionBackend:\n    pass\n"},
            when=at(22),
        ),
        "later": r.commit(
            "Scheduler: chunked prefill budget", {"vllm/core/scheduler.py": "BUDGET = 512\n"}, when=at(26)
        ),
    }
    recent = datetime.now(UTC) - timedelta(days=1)
    r.shas["recent"] = r.commit(
        "Fix starvation in the scheduler's waiting queue", {"vllm/core/scheduler.py": "BUDGET = 1024\n"}, when=recent
    )
    return r


def test_offline_the_answer_is_the_ranked_sources_of_the_period(run, engine):
    proc = run("ask", "--repo", str(engine.path), *PERIOD, "--lang", "en", "what changed in the scheduler?")
    assert proc.returncode == 0, proc.stderr
    assert "🗓 engine · 2026-01-19..2026-01-25 (Asia/Shanghai) · 4 commits" in proc.stdout
    assert "No LLM is configured" in proc.stdout
    assert sources(proc.stdout) == [engine.shas["sched"][:7]]  # not the scheduler commit of the 26th
    assert "Preempt lower-priority requests earlier (#101)" in proc.stdout
    assert proc.stderr == ""


def test_symbols_chinese_questions_and_the_words_of_the_question(run, engine):
    proc = run("ask", "--repo", str(engine.path), *PERIOD, "--lang", "zh", "FP8 在 ROCm 上有什么改动？")
    assert proc.returncode == 0, proc.stderr
    assert "2026-01-19..2026-01-25（Asia/Shanghai）· 4 个提交" in proc.stdout and "**来源**" in proc.stdout
    assert sources(proc.stdout) == [engine.shas["rocm"][:7]]
    proc = run("ask", "--repo", str(engine.path), *PERIOD, "--lang", "en", "who touched _schedule_running?")
    assert sources(proc.stdout) == [engine.shas["sched"][:7]]
    proc = run("ask", "--repo", str(engine.path), *PERIOD, "--lang", "en", "any flash attention work?")
    assert sources(proc.stdout) == [engine.shas["attn"][:7]]
    # No flags: the period is read from the question, in the default zone (DEFAULT_TZ).
    proc = run("ask", "--repo", str(engine.path), "--lang", "en", "what changed in the scheduler in the last 3 days?")
    assert proc.returncode == 0, proc.stderr
    assert sources(proc.stdout) == [engine.shas["recent"][:7]]


def test_nothing_matching_and_no_commits_are_said_in_one_sentence(run, engine):
    proc = run("ask", "--repo", str(engine.path), *PERIOD, "--lang", "en", "what changed in the tokenizer?")
    assert proc.returncode == 0
    assert proc.stdout.strip() == (
        "Nothing in that period matches: none of the 4 commits of engine in "
        "2026-01-19..2026-01-25 (Asia/Shanghai) is about that."
    )
    proc = run(
        "ask",
        "--repo",
        str(engine.path),
        "--since",
        "2026-01-01",
        "--until",
        "2026-01-05",
        "--lang",
        "en",
        "what changed?",
    )
    assert proc.stdout.strip() == "No commits in engine in 2026-01-01..2026-01-05 (Asia/Shanghai)."


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ("--since", "2026-01-25", "--until", "2026-01-19"),
            "The period ends (2026-01-19) before it starts (2026-01-25).",
        ),
        (("--since", "2025-11-01", "--until", "2026-01-19"), "spans 80 days; the limit is 31 (MAX_RANGE_DAYS)."),
        (("--commit", "abc1234", "--since", "2026-01-19"), "--commit asks about one commit and --since/--until"),
        (
            (
                "--since",
                "2026-02-30",
            ),
            "'2026-02-30' is not a real calendar date.",
        ),
        (("--tz", "Mars/Base"), "Unknown time zone 'Mars/Base'"),
        ((), "spans 40 days; the limit is 31 (MAX_RANGE_DAYS)."),  # from the question's words
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, engine, args, message):
    proc = run("ask", "--repo", str(engine.path), *args, "--lang", "en", "what changed in the last 40 days?")
    assert proc.returncode == 2
    line = one_clear_line(proc)
    assert line.startswith("error: ") and message in line
    assert proc.stdout == ""


def _citing(request: dict):
    """A model that cites the scheduler commit it was given, a SHA it was not given, and streams."""
    if not request.get("stream"):
        return default_responder(request)
    user = request["messages"][-1]["content"]
    given = re.findall(r"^\[([0-9a-f]{7})\]", user, re.M)
    text = f"The scheduler now preempts earlier [{given[0]}]; also see [f00dbabe]."
    return Reply(chunks=[text[i : i + 9] for i in range(0, len(text), 9)])


def test_with_an_llm_the_answer_streams_cites_and_sources_come_from_the_retrieval(run, engine):
    with FakeOpenAI(_citing) as llm:
        extra = {"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test"}
        digest = run(
            "digest", "--repo", str(engine.path), "--date", "2026-01-19..2026-01-25", "--lang", "en", extra=extra
        )
        assert digest.returncode == 0, digest.stderr
        analysed = len(
            [r for r in llm.requests if not r.get("stream") and '"bullets"' not in r["messages"][0]["content"]]
        )
        assert analysed == 4

        proc = run(
            "ask", "--repo", str(engine.path), *PERIOD, "--lang", "en", "what changed in the scheduler?", extra=extra
        )
        assert proc.returncode == 0, proc.stderr
        short = engine.shas["sched"][:7]
        assert f"The scheduler now preempts earlier [{short}]; also see [not a source]." in proc.stdout
        assert "f00dbabe" not in proc.stdout
        assert sources(proc.stdout) == [short]  # what it cited, written from the index
        assert "Preempt lower-priority requests earlier (#101)" in proc.stdout.split("**Sources**")[1]
        # The digest's analyses were reused: the question cost one streamed answer, no analysis.
        streams = [r for r in llm.requests if r.get("stream")]
        assert len(llm.requests) == analysed + 1 + 1 and len(streams) == 1  # + the digest's headline
        prompt = streams[0]["messages"][-1]["content"]
        assert f"[{short}]" in prompt and "what changed in the scheduler?" in prompt
        assert engine.shas["later"][:7] not in prompt  # outside the period
