"""A question about a busy week, as a user runs it (`python -m bot ask`, a real process, real Redis,
a real git repository, the fake LLM endpoint counting requests): the period is indexed from the
commits themselves, at most HISTORY_MAX_ANALYSES commits are analysed, the answer says how many
were read in full, a touched directory outranks a word in a message, and an answer that copies
its source line or is in the wrong language is asked again once, then replaced by the list."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder
from tests.gitrepo import GitRepo, bulk_commits
from tests.shared.history_cli import history_run, one_clear_line, sources


@pytest.fixture
def run(redis_url, tmp_path):
    return history_run(redis_url, tmp_path)


SH = ZoneInfo("Asia/Shanghai")
WEEK = ("--since", "2026-01-19", "--until", "2026-01-25", "--tz", "Asia/Shanghai")
BULK = 84


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> GitRepo:
    """86 commits in a week: 84 small fixes, the week's only resolver change (its words are in its
    paths, not its title), and a trampoline upgrade whose message keeps saying "resolving"."""
    r = GitRepo(tmp_path_factory.mktemp("busy") / "busy")
    r.commit("init", {"README.md": "busy\n"}, when=datetime(2026, 1, 10, 10, tzinfo=SH))
    bulk_commits(r, BULK, datetime(2026, 1, 19, 9, tzinfo=SH), step_seconds=6000)
    r.git("checkout", "-q", "-f", "main")
    at = datetime(2026, 1, 25, 12, tzinfo=SH)
    r.shas = {
        "resolver": r.commit(
            "Allow disabling `exclude-newer` per package (#301)\n\nA package may opt out of the cut-off date.",
            {
                f"crates/x-resolver/src/{name}.rs": f"pub fn {name}() {{}}\n"
                for name in ("lib", "candidate", "options", "fork", "exclude_newer", "pubgrub")
            }
            | {
                "crates/x-settings/src/settings.rs": "pub struct ExcludeNewerPackage;\n",
                "docs/reference/settings.md": "exclude-newer-package\n",
            },
            when=at,
        ),
        "decoy": r.commit(
            "Upgrade trampoline to 0.4 (#302)\n\nFixes resolving the interpreter when resolving a symlinked "
            "launcher; resolving now follows relative links, and resolving errors name the path.",
            {"crates/x-trampoline/trampolines/x-trampoline.exe": "MZ-v0.4\n"},
            when=at + timedelta(minutes=5),
        ),
    }
    return r


def _responder(stream_replies: list[str]):
    """Analyses as the default fake answers them; streamed answers from `stream_replies` in order
    (each a template: {sha} is the first commit it was given)."""
    queue = list(stream_replies)

    def respond(request: dict):
        if not request.get("stream"):
            return default_responder(request)
        user = request["messages"][1]["content"]
        sha = re.findall(r"^\[([0-9a-f]{7})\]", user, re.M)[0]
        line = next(x for x in user.splitlines() if x.startswith(f"[{sha}]"))
        body = (queue.pop(0) if len(queue) > 1 else queue[0]).format(sha=sha, line=line)
        return Reply(chunks=[body[i : i + 40] for i in range(0, len(body), 40)])

    return respond


def _llm(fake) -> dict:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}


def _streams(fake) -> list[dict]:
    return [r for r in fake.requests if r.get("stream")]


GOOD = "Packages can now opt out of the exclude-newer cut-off one by one [{sha}], which the resolver honours."


def test_a_question_about_a_busy_week_analyses_at_most_the_bound(run, busy):
    with FakeOpenAI(_responder([GOOD])) as fake:
        proc = run("ask", "--repo", str(busy.path), *WEEK, "--lang", "en", "what happened?", extra=_llm(fake))
        assert proc.returncode == 0, proc.stderr
        assert "· 86 commits" in proc.stdout
        assert len(fake.requests) <= 10 + 2  # HISTORY_MAX_ANALYSES (default 10) + the answer + a retry
        assert len([r for r in fake.requests if not r.get("stream")]) == 10 and len(_streams(fake)) == 1
        assert (
            "Read 10 of the 86 commits in full; the rest were matched by their titles, messages and paths."
            in proc.stdout
        )
        assert "10 of the period's 86 commits were read in full" in _streams(fake)[0]["messages"][0]["content"]

        # Asked again: the ten are cached and indexed; three more of the best matches are analysed.
        fake.requests.clear()
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "en",
            "what happened?",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "3"},
        )
        assert proc.returncode == 0, proc.stderr
        assert len([r for r in fake.requests if not r.get("stream")]) <= 3
        assert "Read 1" in proc.stdout and "of the 86 commits in full" in proc.stdout


def test_a_touched_directory_outranks_a_word_in_a_message(run, busy):
    proc = run("ask", "--repo", str(busy.path), *WEEK, "--lang", "en", "What changed in the resolver?")
    assert proc.returncode == 0, proc.stderr
    assert sources(proc.stdout)[0] == busy.shas["resolver"][:7]
    assert "Read 0 of the 86 commits in full" in proc.stdout  # no LLM: nothing analysed, and it says so
    with FakeOpenAI(_responder([GOOD])) as fake:
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "en",
            "What changed in the resolver?",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "1"},
        )
        assert proc.returncode == 0, proc.stderr
        analysed = [r for r in fake.requests if not r.get("stream")]
        assert len(analysed) == 1 and "x-resolver" in analysed[0]["messages"][-1]["content"]
        prompt = _streams(fake)[0]["messages"][1]["content"]
        assert prompt.index(busy.shas["resolver"][:7]) < prompt.index(busy.shas["decoy"][:7])
        assert "the resolver honours." in proc.stdout and sources(proc.stdout) == [busy.shas["resolver"][:7]]


COPY = "- {line}"


def test_an_answer_copying_its_source_line_is_asked_again(run, busy):
    with FakeOpenAI(_responder([COPY, GOOD])) as fake:
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "en",
            "What changed in the resolver?",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "0"},
        )
        assert proc.returncode == 0, proc.stderr
        streams = _streams(fake)
        assert len(streams) == 2
        assert streams[1]["messages"][-2] == {
            "role": "assistant",
            "content": COPY.format(
                line=next(
                    x
                    for x in streams[0]["messages"][1]["content"].splitlines()
                    if x.startswith(f"[{busy.shas['resolver'][:7]}]")
                )
            ),
        }
        assert "only repeated a commit's line" in streams[1]["messages"][-1]["content"]
        assert "the resolver honours." in proc.stdout
        assert "· feature ·" not in proc.stdout and "· other ·" not in proc.stdout  # the copy never shows
    with FakeOpenAI(_responder([COPY])) as fake:  # copies twice: the ranked list, saying why
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "en",
            "What changed in the resolver?",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "0"},
        )
        assert len(_streams(fake)) == 2
        assert "ℹ️ The LLM's answer only repeated a line of its sources, twice, so here are the commits" in proc.stdout
        assert sources(proc.stdout)[0] == busy.shas["resolver"][:7]


ENGLISH = "The resolver now lets each package opt out of the exclude-newer date [{sha}]; nothing else changed there."
CHINESE = "解析器现在允许按包关闭 exclude-newer 截止日期 [{sha}]。"


def test_an_answer_in_the_wrong_language_is_asked_again_then_replaced_visibly(run, busy):
    with FakeOpenAI(_responder([ENGLISH, CHINESE])) as fake:
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "zh",
            "解析器有什么改动？",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "0"},
        )
        assert proc.returncode == 0, proc.stderr
        streams = _streams(fake)
        assert len(streams) == 2 and "Simplified Chinese (简体中文)" in streams[1]["messages"][-1]["content"]
        assert "解析器现在允许按包关闭" in proc.stdout and "opt out" not in proc.stdout
        assert "完整阅读了 86 个提交中的 0 个" in proc.stdout
    with FakeOpenAI(_responder([ENGLISH])) as fake:
        proc = run(
            "ask",
            "--repo",
            str(busy.path),
            *WEEK,
            "--lang",
            "zh",
            "解析器有什么改动？",
            extra=_llm(fake) | {"HISTORY_MAX_ANALYSES": "0"},
        )
        assert len(_streams(fake)) == 2 and "opt out" not in proc.stdout
        assert "ℹ️ LLM 两次都没有用中文回答。以下是这段时间内与问题最相关的提交：" in proc.stdout
        assert sources(proc.stdout)[0] == busy.shas["resolver"][:7]


@pytest.mark.parametrize("value", ["-1", "lots", "101"])
def test_a_bad_bound_is_one_clear_sentence(run, busy, value):
    proc = run(
        "ask", "--repo", str(busy.path), *WEEK, "--lang", "en", "what happened?", extra={"HISTORY_MAX_ANALYSES": value}
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_clear_line(proc).startswith("error: Configuration error: HISTORY_MAX_ANALYSES")
