"""The command line as a user runs it: a real `python -m bot` process, real Redis, real git."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.shared.cli import SH, cli_repo, english_run


@pytest.fixture
def repo(tmp_path):
    return cli_repo(tmp_path)


@pytest.fixture
def run(run):
    """These tests read the CLI's English lines (DEFAULT_LANG=en); the default, zh, and one
    language per run are test_cli_clean.py's."""
    return english_run(run)


ROOT = Path(__file__).resolve().parent.parent


def one_clear_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_digest_to_stdout_and_file(run, repo, tmp_path):
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    assert "# Daily update report (2026-01-28)" in proc.stdout
    assert "fix: handle empty rows in export" in proc.stdout and "feat: add CSV export" in proc.stdout
    assert "Signed-off-by" not in proc.stdout and "a@example.com" not in proc.stdout
    out = tmp_path / "day.json"
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--format", "json", "--out", str(out))
    assert proc.returncode == 0 and f"wrote {out} (2 commits)" in proc.stderr
    assert '"schema": "digest-bot/digest@1"' in out.read_text()


@pytest.mark.parametrize(
    "args,code,message",
    [
        (("--date", "2026-02-30"), 2, "'2026-02-30' is not a real calendar date."),
        (("--date", "2999-01-01"), 2, "2999-01-01 is in the future"),
        (("--date", "28.01.2026"), 2, "is not a date: use YYYY-MM-DD"),
        (("--tz", "Mars/Olympus"), 2, "Unknown time zone 'Mars/Olympus'"),
        (("--lang", "fr"), 2, "argument --lang: invalid choice: 'fr'"),
        (("--out", "/nonexistent/dir/x.md"), 2, "the folder /nonexistent/dir does not exist"),
        (("--branch", "nope"), 2, "No branch 'nope' in widgets."),
    ],
)
def test_bad_digest_input_is_one_line(run, repo, args, code, message):
    proc = run("digest", "--repo", str(repo.path), *args)
    assert proc.returncode == code
    assert message in one_clear_line(proc)


ENGLISH_WORDS = __import__("re").compile(r"[A-Za-z]{3,} [A-Za-z]{2,}")  # two English words in a row: a sentence


@pytest.mark.parametrize(
    "args,message",
    [
        (("--date", "2026-02-30"), "错误：“2026-02-30”不是真实存在的日期。"),
        (("--date", "2999-01-01"), "错误：2999-01-01 还没到"),
        (("--date", "明年"), "错误：“明年”不是日期"),
        (("--date", "2026-01-01..2026-03-01"), "错误：范围 2026-01-01..2026-03-01 共 60 天，超过上限 31 天。"),
        (("--tz", "Mars/Olympus"), "错误：未知时区“Mars/Olympus”"),
        (("--out", "/nonexistent/dir/x.md"), "错误：无法写入 /nonexistent/dir/x.md：文件夹 /nonexistent/dir 不存在。"),
        (("--branch", "nope"), "错误：widgets 中没有分支“nope”。"),
    ],
)
def test_bad_digest_input_is_said_in_chinese_with_lang_zh(run, repo, args, message):
    proc = run("digest", "--repo", str(repo.path), "--lang", "zh", *args)
    line = proc.stderr.strip()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "\n" not in line
    assert line.startswith(message), line
    assert not ENGLISH_WORDS.search(line), line


@pytest.mark.parametrize("date", ["2026年1月28日", "2026-01-27..2026年1月28日"])
def test_chinese_dates_on_the_command_line(run, repo, date):
    proc = run("digest", "--repo", str(repo.path), "--date", date, "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    assert "feat: add CSV export" in proc.stdout and "更新报告" in proc.stdout


def test_yesterday_in_chinese_is_the_zones_yesterday(run, repo):
    from datetime import timedelta

    proc = run("digest", "--repo", str(repo.path), "--date", "昨天", "--lang", "zh", "--tz", "Asia/Shanghai")
    yesterday = (datetime.now(SH) - timedelta(days=1)).date().isoformat()
    assert proc.returncode == 0, proc.stderr
    assert f"widgets（main）在 {yesterday}（Asia/Shanghai）没有提交。" in proc.stderr  # the stderr line in Chinese too


def test_bad_repositories(run, tmp_path):
    proc = run("digest", "--repo", str(tmp_path), "--date", "2026-01-28")
    assert proc.returncode == 2 and "is not a git repository" in one_clear_line(proc)
    proc = run("digest", "--repo", "no such thing", "--date", "2026-01-28")
    assert proc.returncode == 2 and "names no repository; name one as a local path" in one_clear_line(proc)


def test_github_unreachable_is_a_runtime_error(run):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run(
        "digest",
        "--repo",
        "octo/widgets",
        "--date",
        "2026-01-28",
        env={"GITHUB_API_URL": f"http://127.0.0.1:{port}", "GITHUB_TOKEN": "ghp_secretsecretsecretsecret1234"},
    )
    assert proc.returncode == 1
    line = one_clear_line(proc)
    assert "Could not reach GitHub at 127.0.0.1" in line and "ghp_" not in proc.stderr + proc.stdout


def test_empty_day_says_so_and_still_writes(run, repo):
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-27", "--lang", "en")
    assert proc.returncode == 0
    assert "No commits in widgets (main) on 2026-01-27 (Asia/Shanghai)." in proc.stderr
    assert "No new commits in widgets on 2026-01-27" in proc.stdout


def test_bad_configuration_is_one_line(run, repo):
    proc = run("digest", "--repo", str(repo.path), env={"LLM_CONCURRENCY": "lots"})
    assert proc.returncode == 2
    assert one_clear_line(proc).startswith("error: Configuration error: LLM_CONCURRENCY")
    proc = run(
        "digest", "--repo", str(repo.path), env={"OPENAI_API_KEY": "sk-abcdefabcdefabcdefabcdef", "LLM_TIMEOUT": "-1"}
    )
    assert "sk-abcdef" not in proc.stderr and proc.returncode == 2


@pytest.mark.parametrize(
    "variable,value,said",
    [
        ("LLM_CONCURRENCY", "lots", "错误：配置错误：LLM_CONCURRENCY 必须是整数。"),
        ("LLM_TIMEOUT", "-1", "错误：配置错误：LLM_TIMEOUT 必须大于 0。"),
        ("DEFAULT_LANG", "fr", "错误：配置错误：DEFAULT_LANG 只能是 zh 或 en。"),
        (
            "DEFAULT_TZ",
            "Mars/Base",
            "错误：配置错误：DEFAULT_TZ 是未知时区 'Mars/Base'（请用 IANA 名称，例如 Asia/Shanghai）。",
        ),
        ("OPENAI_BASE_URL", "ftp://llm.internal", "错误：配置错误：OPENAI_BASE_URL 必须以 http:// 或 https:// 开头。"),
    ],
)
def test_bad_configuration_is_said_in_chinese_with_lang_zh(run, repo, variable, value, said):
    proc = run("digest", "--repo", str(repo.path), "--lang", "zh", env={variable: value})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [said]


def test_ask_offline_shows_relevant_hunks(run, repo):
    sha = repo.git("rev-parse", "HEAD").strip()
    proc = run("ask", "--repo", str(repo.path), "--commit", sha[:8], "--lang", "en", "what happens with empty rows?")
    assert proc.returncode == 0, proc.stderr
    assert "No LLM is configured" in proc.stdout
    assert "+    if not rows:" in proc.stdout and "src/export.py" in proc.stdout


def test_ask_streams_the_llm_answer(run, repo):
    sha = repo.git("rev-parse", "HEAD").strip()
    with FakeOpenAI() as llm:
        llm.responder = lambda req: "Empty input now returns None instead of a writer."
        proc = run(
            "ask",
            "--repo",
            str(repo.path),
            "--commit",
            sha,
            "is this safe?",
            env={"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test-cli-1234567890"},
        )
    assert proc.returncode == 0, proc.stderr
    assert "Empty input now returns None instead of a writer." in proc.stdout
    streamed = [r for r in llm.requests if r.get("stream")]
    assert streamed and "is this safe?" in streamed[-1]["messages"][-1]["content"]
    assert "+    if not rows:" in streamed[-1]["messages"][-1]["content"]  # the diff was re-read


def test_ask_unknown_commit(run, repo):
    proc = run("ask", "--repo", str(repo.path), "--commit", "deadbeef", "why?")
    assert proc.returncode == 2 and "No commit 'deadbeef' in widgets." in one_clear_line(proc)
    proc = run("ask", "--repo", str(repo.path), "--commit", "deadbeef", "--lang", "en", " ")
    assert proc.returncode == 2 and "Please ask something" in one_clear_line(proc)


def test_unknown_names_on_github_are_bad_input(run, fake_github):
    """An unknown SHA, branch or repository is the user's typo: exit 2 and one sentence (GitHub
    being unreachable stays exit 1, see above)."""
    fake_github.add_repo("octo/widgets")
    sha = fake_github.add_commit(
        "octo/widgets", "feat: add a knob (#12)", committed_at=datetime(2026, 1, 28, 3, 0, tzinfo=SH)
    )
    env = {"GITHUB_API_URL": fake_github.url}
    proc = run("ask", "--repo", "octo/widgets", "--commit", "deadbeef", "why?", env=env)
    assert proc.returncode == 2 and "No commit 'deadbeef' in octo/widgets." in one_clear_line(proc)
    proc = run("digest", "--repo", "octo/widgets", "--date", "2026-01-28", "--branch", "nope", env=env)
    assert proc.returncode == 2 and "No branch 'nope' in octo/widgets." in one_clear_line(proc)
    proc = run("digest", "--repo", "octo/gadgets", "--date", "2026-01-28", env=env)
    assert proc.returncode == 2
    assert "Repository octo/gadgets was not found on GitHub" in one_clear_line(proc)
    proc = run("ask", "--repo", "octo/widgets", "--commit", sha[:10], "--lang", "en", "why?", env=env)
    assert proc.returncode == 0, proc.stderr  # the same source does find a commit that exists


def test_help_is_fast_path_without_chat_sdks(run):
    probe = (
        "import sys\nfrom bot.__main__ import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('slack_bolt', 'slack_sdk', 'lark_oapi', 'openai', 'github', 'redis', 'pydantic')))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert "usage: python -m bot" in proc.stdout
    assert proc.stdout.strip().endswith("LOADED []")


def test_unknown_subcommand(run):
    proc = run("frobnicate")
    assert proc.returncode == 2 and "invalid choice: 'frobnicate'" in one_clear_line(proc)


def test_worker_without_a_chat_platform_says_so(run, repo):
    """A worker runs jobs that post into chats: with no platform to post to it refuses at once."""
    proc = run("worker", env={"DEFAULT_REPO": str(repo.path)})
    assert proc.returncode == 2
    assert "'worker' needs a chat platform" in one_clear_line(proc)


@pytest.mark.parametrize("stdin", ["devnull", "closed-empty-pipe", "empty-file"])
def test_run_without_a_platform_or_a_terminal_says_so(run, repo, tmp_path, stdin):
    """A container's `run` (no chat platform, stdin /dev/null or empty) used to open the terminal
    chat, read nothing and exit 0 at once, silently; now it says why it cannot serve."""
    env = {**run.base_env, "DEFAULT_REPO": str(repo.path), "DEFAULT_LANG": "en"}
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    feed = {"devnull": {"stdin": subprocess.DEVNULL}, "closed-empty-pipe": {"input": ""}}.get(stdin)
    with open(empty) as fed:
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "run"],
            **(feed or {"stdin": fed}),
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert proc.returncode == 2
    assert "'run' has no chat platform configured and no terminal to chat in" in one_clear_line(proc)
    assert proc.stdout == ""


def test_a_bad_repository_profile_is_said_at_the_top_of_the_digest(run, repo):
    """A `.digest.toml` that cannot be used does not stop the digest; the maintainers reading it
    are told why their profile was set aside, in the digest's language."""
    repo.commit(
        "chore: add a digest profile",
        {".digest.toml": "[surface\ncli = ['src/cli.py']\n"},
        when=datetime(2026, 1, 27, 9, 0, tzinfo=SH),
    )
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    assert "⚠️ The repository profile was not used: .digest.toml is not valid TOML" in proc.stdout
    assert "fix: handle empty rows in export" in proc.stdout
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "zh")
    assert "⚠️ 仓库配置（.digest.toml）未生效" in proc.stdout


def test_data_dir_defaults_to_the_user_data_directory_not_the_working_one(redis_url, repo, tmp_path):
    """A CLI run from any directory leaves nothing there: the embedded Redis lives in the user's
    data directory unless DATA_DIR says otherwise (`DATA_DIR=./.data`: beside the checkout)."""
    import os

    elsewhere, xdg = tmp_path / "elsewhere", tmp_path / "xdg"
    elsewhere.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "DATA_DIR"))
    }
    env.update({"PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(xdg)})

    def bot(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            cwd=elsewhere,
            timeout=120,
        )

    assert f"DATA_DIR={xdg / 'digest-bot'}" in bot("settings").stdout
    proc = bot("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en")  # embedded Redis
    assert proc.returncode == 0, proc.stderr
    assert "fix: handle empty rows in export" in proc.stdout
    assert list(elsewhere.iterdir()) == []  # no ./.data left behind
    assert (xdg / "digest-bot").is_dir()  # the embedded Redis's home (its redis.db is written when it saves)
    proc = bot("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", DATA_DIR="./.data")
    assert proc.returncode == 0, proc.stderr
    assert (elsewhere / ".data").is_dir()  # asked for: there


@pytest.mark.parametrize(
    "args,said",
    [
        (("digest", "--lang", "zh", "--date"), "错误：参数 --date：需要一个值（用法见 python -m bot digest --help）"),
        (("digest", "--lang", "zh"), "错误：缺少必需的参数：--repo（用法见 python -m bot digest --help）"),
        (
            ("digest", "--repo", ".", "--lang=zh", "--frob"),
            "错误：无法识别的参数：--frob（用法见 python -m bot --help）",
        ),
        (
            ("digest", "--repo", ".", "--lang", "zh", "--format", "pdf"),
            "错误：参数 --format：无效的取值 'pdf'（可选：'markdown', 'json', 'changelog'）（用法见 python -m bot digest --help）",
        ),
        (
            ("eval", "--lang", "zh", "--limit", "many"),
            "错误：参数 --limit：无效的 int 值：'many'（用法见 python -m bot eval --help）",
        ),
    ],
)
def test_bad_flags_are_said_in_chinese_with_lang_zh(run, args, said):
    proc = run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [said]


def test_bad_flags_are_one_line_in_default_lang_without_lang(run):
    proc = run("digest", "--repo", ".", "--frob")
    assert proc.returncode == 2
    assert one_clear_line(proc) == "error: unrecognized arguments: --frob (see python -m bot --help)"


@pytest.mark.parametrize(
    "lang,said,english",
    [
        (
            "zh",
            ["[… 已截断：另有 ", " 行未显示]", "未显示（1 个文件）：", "- package-lock.json（锁文件）"],
            ["clipped:", "Not shown", "(lockfile)"],
        ),
        ("en", ["[… clipped: ", " more lines not shown]", "Not shown (1 file):", "- package-lock.json (lockfile)"], []),
    ],
)
def test_an_answer_without_an_llm_marks_what_it_left_out_in_the_readers_language(run, repo, lang, said, english):
    repo.commit(
        "feat: a big table",
        {
            # Rows too long for the answer's token budget: the block that holds ROW_12 is clipped.
            "src/table.py": "".join(f"ROW_{i} = {i} * 2  # {'entry ' * 150}\n" for i in range(60)),
            "package-lock.json": '{"lockfileVersion": 3}\n',
        },
        when=datetime(2026, 1, 28, 20, 0, tzinfo=SH),
    )
    sha = repo.git("rev-parse", "HEAD").strip()
    proc = run("ask", "--repo", str(repo.path), "--commit", sha[:10], "--lang", lang, "what is ROW_12?")
    assert proc.returncode == 0, proc.stderr
    for words in said:
        assert words in proc.stdout, proc.stdout[-600:]
    for words in english:
        assert words not in proc.stdout
