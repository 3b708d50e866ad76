"""What a real small model (Qwen2.5-Coder-1.5B on llama-cpp-python, issue 25) still got past the
checks, replayed through the fake endpoint and read where the reader reads it (the CLI's digest,
the console's thread): rows of the prompt copied as the headline, English in a Chinese digest and
thread, `<无>` and "No further recommendations needed." published, a reason that is the title, a
prompt that left the answer no room, a second endpoint inheriting the first one's failures, and a
timeout nobody was told about."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.openai_server import Behaviour, FakeOpenAI, Reply, good_answer, qwen_like_tokens, request_lang, script
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
KEY = "sk-test-small-0123456789abcdef"
DAY = "2026-01-12"
NOW = datetime(2026, 1, 13, 9, 0, tzinfo=SH)


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    """Five commits of one day, in English (as most upstreams write them)."""
    repo = GitRepo(tmp_path / "uv")
    for hour, (title, path, body) in enumerate(
        [
            ("feat: add --since to export", "src/export.py", "def export(rows, since=None):\n    return rows\n"),
            (
                "fix: skip empty rows in export",
                "src/export.py",
                "def export(rows, since=None):\n    return [r for r in rows if r]\n",
            ),
            ("Re-enable pyx integration tests (#17414)", "tests/test_pyx.py", "def test_upload():\n    assert True\n"),
            (
                "perf: cache the resolver's candidate list",
                "crates/uv-resolver/src/lib.rs",
                "pub fn candidates() -> Vec<u8> {\n    CACHE.clone()\n}\n",
            ),
            ("docs: explain exclude-newer", "docs/settings.md", "# exclude-newer\n\nPer package now.\n"),
        ]
    ):
        repo.commit(title, {path: body}, when=datetime(2026, 1, 12, 9 + hour, 0, tzinfo=SH))
    return repo


@pytest.fixture
def run(redis_url, tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"small{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": KEY,
            "LLM_TIMEOUT": "5",
            "LLM_MAX_RETRIES": "1",
            "ANALYSIS_CONCURRENCY": "1",
        }
    )

    def invoke(*args: str, url: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**env, "OPENAI_BASE_URL": url, **extra},
            cwd=tmp_path,
            timeout=180,
        )

    return invoke


def digest_json(run, repo, url: str, lang: str = "zh", **extra: str) -> dict:
    proc = run("digest", "--repo", str(repo.path), "--date", DAY, "--lang", lang, "--format", "json", url=url, **extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)["digests"][0]


def markdown(run, repo, url: str, lang: str = "zh", **extra: str) -> str:
    proc = run("digest", "--repo", str(repo.path), "--date", DAY, "--lang", lang, url=url, **extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def headline_requests(fake: FakeOpenAI) -> list[dict]:
    return [r for r in fake.requests if '"bullets"' in r["messages"][0]["content"]]


# --- 1. a headline that copies its input ----------------------------------------------------------------


def test_a_headline_that_copies_the_prompts_commit_rows_is_refused_and_said(run, repo):
    with FakeOpenAI(Behaviour("copy_rows")) as fake:
        shown = markdown(run, repo, fake.url)
        asked = headline_requests(fake)
    assert len(asked) == 2  # asked, then corrected once
    assert "copies a commit's row" in asked[1]["messages"][-1]["content"]
    # the reader never sees a row of the prompt: the rule-based headline, said to be one
    assert "> ⚠️ 要点由规则生成，而非 LLM：LLM 的回答未通过校验。" in shown
    assert "| why:" not in shown and "| summary:" not in shown and "[medium]" not in shown


def test_a_headline_in_its_own_words_naming_a_title_is_kept(run, repo):
    def responder(request):
        if '"bullets"' in request["messages"][0]["content"]:
            return json.dumps(
                {"bullets": ["feat: add --since to export", "export 命令现在会跳过空行，脚本的输出行数可能变少。"]},
                ensure_ascii=False,
            )
        return good_answer(request)

    with FakeOpenAI(responder) as fake:
        digest = digest_json(run, repo, fake.url)
    assert digest["headline_origin"] == "llm" and len(headline_requests(fake)) == 1
    assert digest["headline"][1] == "export 命令现在会跳过空行，脚本的输出行数可能变少。"


# --- 2. the wrong language ----------------------------------------------------------------------------------


def test_english_analyses_in_a_chinese_digest_are_corrected_then_fall_back_visibly(run, repo):
    with FakeOpenAI(Behaviour("wrong_language")) as fake:
        digest = digest_json(run, repo, fake.url)
    entries = digest["entries"]
    assert [e["analysis"]["origin"] for e in entries] == ["fallback"] * 5
    assert all("英文" in e["analysis"]["note"] and "简体中文" in e["analysis"]["note"] for e in entries)
    assert not any(e["analysis"]["summary"].startswith("Changes ") for e in entries)  # no English published
    corrective = [r["messages"][-1]["content"] for r in fake.requests if len(r["messages"]) == 3]
    assert corrective and all("Simplified Chinese" in c for c in corrective)  # the retry says which language
    assert digest["notices"] and "5" in digest["notices"][0]
    assert digest["headline_origin"] == "fallback"  # its English bullets were refused too


def test_a_model_that_switches_to_chinese_when_told_is_accepted(run, repo):
    def responder(request):
        if len(request["messages"]) == 3:  # the corrective retry: the default, in Chinese
            return Reply() if '"bullets"' in request["messages"][0]["content"] else good_answer(request)
        return Behaviour("wrong_language")(request)

    with FakeOpenAI(responder) as fake:
        digest = digest_json(run, repo, fake.url)
    assert [e["analysis"]["origin"] for e in digest["entries"]] == ["llm"] * 5
    assert all("修改了" in e["analysis"]["summary"] for e in digest["entries"])
    assert digest["notices"] == []


def test_an_english_digest_refuses_a_chinese_answer_as_well(run, repo):
    zh = (
        '{"change_type": "feature", "importance": "medium", "importance_reason": "为公开的命令行新增了一个选项，影响导出脚本。", '
        '"summary": "为 export 命令新增 --since 参数，用户可以只导出最近的记录，旧脚本不受影响。"}'
    )

    def responder(request):
        return Reply() if '"bullets"' in request["messages"][0]["content"] else zh

    with FakeOpenAI(responder) as fake:
        digest = digest_json(run, repo, fake.url, lang="en")
    assert {e["analysis"]["origin"] for e in digest["entries"]} == {"fallback"}
    assert "written in Simplified Chinese, not in English" in digest["entries"][0]["analysis"]["note"]


@pytest.fixture
def console(console_in):
    """`await console(url)`: the shared console chat (tests/shared/console.py) in Chinese, on `url`."""

    async def open_chat(url: str, lang: str = "zh"):
        return await console_in(lang, openai_base_url=url, openai_api_key=KEY, llm_timeout=5.0, llm_max_retries=1)

    return open_chat


async def test_a_thread_answer_in_english_to_a_chinese_question_is_asked_again_then_falls_back(console, repo):
    sha = repo.git("rev-parse", "HEAD").strip()[:8]
    with FakeOpenAI(Behaviour("wrong_language")) as fake:
        chat = await console(fake.url)
        await chat(f"/digest {DAY}")
        answer = await chat(f"reply 1 {sha} 这个改动会影响什么？")
        streams = [r for r in fake.requests if r.get("stream")]
    assert len(streams) == 2  # asked, then told which language once
    assert "简体中文" in streams[1]["messages"][-1]["content"]
    assert "This commit changes the export path" not in answer  # the English answer is never shown
    assert "模型两次都没有用中文回答" in answer and "LLM 未能回答" in answer  # the visible fallback


async def test_a_thread_answer_corrected_to_chinese_is_streamed(console, repo):
    sha = repo.git("rev-parse", "HEAD").strip()[:8]

    def responder(request):
        if request.get("stream") and request_lang(request) == "zh" and len(request["messages"]) == 2:
            return Reply(content="This commit changes the export path; scripts reading its output may need updating.")
        return Reply()  # the default: Chinese to a Chinese prompt

    with FakeOpenAI(responder) as fake:
        chat = await console(fake.url)
        await chat(f"/digest {DAY}")
        answer = await chat(f"reply 1 {sha} 这个改动会影响什么？")
    assert "这个提交新增了 --since 参数" in answer  # the default Chinese stream, on the retry
    assert "This commit changes the export path" not in answer and "模型两次" not in answer


# --- 3. placeholders and filler ------------------------------------------------------------------------------


def test_placeholders_and_filler_are_not_published(run, repo):
    def responder(request):
        if '"bullets"' in request["messages"][0]["content"]:
            return Reply()
        return good_answer(
            request,
            impact="<无>",
            recommendations=["No further recommendations needed.", "无需进一步建议"],
            risks=["暂无其他风险"],
        )

    with FakeOpenAI(responder) as fake:
        shown = markdown(run, repo, fake.url)
        digest = digest_json(run, repo, fake.url)
    assert {e["analysis"]["origin"] for e in digest["entries"]} == {"llm"}
    assert all(
        e["analysis"]["impact"] == "" and e["analysis"]["recommendations"] == [] and e["analysis"]["risks"] == []
        for e in digest["entries"]
    )
    assert "无&gt;" not in shown and "<无>" not in shown and "No further recommendations" not in shown
    assert "无需进一步建议" not in shown and "暂无其他风险" not in shown


def test_a_reason_that_is_the_commit_title_is_sent_back(run, repo):
    def responder(request):
        if '"bullets"' in request["messages"][0]["content"]:
            return Reply()
        if len(request["messages"]) == 3:
            return good_answer(request, importance_reason="用户可见的导出行为变化，脚本需要检查。")
        return Behaviour("filler")(request)

    with FakeOpenAI(responder) as fake:
        digest = digest_json(run, repo, fake.url)
    retries = [r["messages"][-1]["content"] for r in fake.requests if len(r["messages"]) == 3]
    assert len(retries) == 5 and all("repeats the commit title" in m for m in retries)
    assert {e["analysis"]["importance_reason"] for e in digest["entries"]} == {"用户可见的导出行为变化，脚本需要检查。"}


# --- 4. room to answer -------------------------------------------------------------------------------------


@pytest.fixture
def big_repo(tmp_path) -> GitRepo:
    """A day of a small commit and big diffs, as the window sees them."""
    repo = GitRepo(tmp_path / "big")
    for n in range(3):
        code = "".join(f"    let column_{j} = parse_column(row, {j})?; // pass {n}\n" for j in range(900))
        repo.commit(
            f"perf: split resolver pass {n}",
            {f"crates/uv-resolver/src/pass_{n}.rs": "fn pass() {\n" + code + "}\n"},
            when=datetime(2026, 1, 12, 9 + n, 0, tzinfo=SH),
        )
    repo.commit(
        "fix: skip empty rows in export",
        {"src/export.py": "def export(rows):\n    return [r for r in rows if r]\n"},
        when=datetime(2026, 1, 12, 15, 0, tzinfo=SH),
    )
    return repo


def test_every_request_leaves_the_answer_its_reserve_in_a_known_window(run, big_repo):
    """Qwen counts a Chinese prompt's Chinese at 0.58 of the estimate and its diff at 0.76: a ratio
    learnt on the small commit's prompt (mostly the Chinese instructions) sized the next prompts
    to leave ~300 tokens of an 8k window for the answer (llama-cpp-python then cuts max_tokens)."""
    with FakeOpenAI(good_answer, window=8192, tokens=qwen_like_tokens, clamps_output=True) as fake:
        digest = digest_json(run, big_repo, fake.url, LLM_CONTEXT_TOKENS="8192")
    assert [e["analysis"]["origin"] for e in digest["entries"]] == ["llm"] * 4
    assert len(fake.rooms) == len(fake.requests) >= 5  # four analyses and the headline, none refused
    assert min(fake.rooms) >= 1024, sorted(fake.rooms)[:5]


def test_a_window_learnt_from_a_refusal_is_kept_with_the_reserve(run, big_repo):
    with FakeOpenAI(good_answer, window=8192, tokens=qwen_like_tokens, clamps_output=True) as fake:
        digest = digest_json(run, big_repo, fake.url)
    assert [e["analysis"]["origin"] for e in digest["entries"]] == ["llm"] * 4
    assert fake.window_refusals >= 1  # the window was learnt from a refusal, as in the field
    assert min(fake.rooms) >= 1024, sorted(fake.rooms)[:5]


# --- 7. the endpoint in the cache key ---------------------------------------------------------------------


def test_a_second_endpoint_serving_the_same_model_does_not_inherit_the_firsts_failures(run, repo):
    down = FakeOpenAI(lambda req: Reply(status=503, error={"message": "overloaded"}), model="qwen")
    up = FakeOpenAI(good_answer, model="qwen")
    with down, up:
        first = digest_json(run, repo, down.url, LLM_MODEL="qwen")
        second = digest_json(run, repo, up.url, LLM_MODEL="qwen")
    assert {e["analysis"]["origin"] for e in first["entries"]} == {"fallback"}
    assert [e["analysis"]["origin"] for e in second["entries"]] == ["llm"] * 5
    assert len([r for r in up.requests if '"bullets"' not in r["messages"][0]["content"]]) == 5


# --- a timeout is said -----------------------------------------------------------------------------------


def test_a_timed_out_request_is_said_on_the_cost_line(run, repo):
    slow_once = script(Reply(delay=2.5), then=good_answer)
    with FakeOpenAI(slow_once) as fake:
        shown = markdown(run, repo, fake.url, lang="en", LLM_TIMEOUT="1")
    assert "· 1 LLM request timed out after 1 s" in shown
    assert len(fake.requests) >= 7  # the timed-out one was sent again
