"""What a newcomer reads in an offline digest (issue 33): the summary says what the diff does, not
the title again; titles are shown as written; the terminal's list of low commits shows each title
once. Real git commits, the real `python -m bot digest` process for the Markdown report, the
builder and the terminal renderer for the chat's list."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.chat_platform import LowCommits
from bot.core.models import Importance
from bot.core.window import day_window
from bot.render.text import render_text
from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 28)

CLI_V1 = """\
import argparse


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
    return parser
"""
# The call is split across lines: the flag stays, it gains a value.
CLI_V2 = """\
import argparse


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--format",
        choices=["markdown", "json", "changelog"],
        default="markdown",
    )
    return parser
"""
CHANGELOG = "def render_changelog(entries):\n    return [e for e in entries]\n\n\ndef heading(day):\n    return day\n"
LANGUAGE = (
    "def prose_counts(text):\n    return len(text)\n\n\ndef wrong_language(text, lang):\n    return lang not in text\n"
)

GITIGNORE = "add .gitignore (pycache, venv, .data, .env)"
LANGUAGE_TITLE = "bot/analysis/language.py: is a text in the reader's language (code set aside)"
FORMAT_TITLE = "digest --format changelog: release notes for a window from the digest's own analyses"
SOURCES_TITLE = "Keep at most 256 open commit sources (chat users can name any repository)"
TITLES = (GITIGNORE, LANGUAGE_TITLE, FORMAT_TITLE, SOURCES_TITLE)


@pytest.fixture
def project(tmp_path):
    r = GitRepo(tmp_path / "proj")
    r.commit("Initial import", {"src/app/cli.py": CLI_V1}, when=datetime(2026, 1, 27, 10, tzinfo=SH))
    r.commit(GITIGNORE, {".gitignore": "__pycache__/\n.venv\n.data/\n.env\n"}, when=datetime(2026, 1, 28, 9, tzinfo=SH))
    r.commit(LANGUAGE_TITLE, {"src/app/language.py": LANGUAGE}, when=datetime(2026, 1, 28, 10, tzinfo=SH))
    r.commit(
        FORMAT_TITLE,
        {"src/app/cli.py": CLI_V2, "src/app/render/changelog.py": CHANGELOG},
        when=datetime(2026, 1, 28, 11, tzinfo=SH),
    )
    r.commit(
        SOURCES_TITLE,
        {"src/app/language.py": LANGUAGE + "\n\ndef open_sources(names):\n    return names[:256]\n"},
        when=datetime(2026, 1, 28, 12, tzinfo=SH),
    )
    return r


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_markdown_digest_says_what_each_diff_does_and_shows_titles_intact(run, project, lang):
    proc = run("digest", "--repo", str(project.path), "--date", DAY.isoformat(), "--lang", lang)
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    for title in TITLES:
        assert title in md  # as written: not re-spaced, not cut after a stripped prefix
    assert "add.gitignore" not in md and ",.data" not in md
    label = {"zh": "**📋 变更摘要**：", "en": "**📋 Summary**: "}[lang]
    summaries = [line.split(label, 1)[1] for line in md.splitlines() if line.startswith(label)]
    assert len(summaries) == len(TITLES)
    for summary in summaries:
        assert not any(title in summary for title in TITLES)  # never the title again
        assert "提交标题" not in summary and "is a text in the reader" not in summary
    said = "\n".join(summaries)
    # what the diffs do, by name: the option's new value, the new file, the functions added
    assert "`--format`" in said and "`changelog`" in said
    assert "`src/app/render/changelog.py`" in said
    assert "`prose_counts`" in said and "`wrong_language`" in said
    assert "`.gitignore`" in said
    # the call split across lines removed no flag: nothing is high, nothing says it was removed
    assert {"zh": "🔴 高 0", "en": "🔴 high 0"}[lang] in md
    for removed in ("移除了命令行参数", "移除 `--format`", "Removes command-line flag", "removes the `--format`"):
        assert removed not in md


async def test_the_terminal_list_of_low_commits_shows_each_title_once(project, make_services):
    services = await make_services(lambda: datetime(2026, 2, 1, tzinfo=UTC))
    for lang in ("zh", "en"):
        digest = await services.builder.build(
            services.source(str(project.path)), day_window(DAY, "Asia/Shanghai"), lang
        )
        low = tuple(e for e in digest.entries if e.importance is Importance.LOW)
        assert low
        listed = render_text(LowCommits(digest, low)).splitlines()[1:]
        assert len(listed) == len(low)
        for line, e in zip(listed, low):
            title, _, summary = line.partition(" — ")
            assert title.endswith(e.commit.title)
            assert line.count(e.commit.title) == 1  # "title — summary", never "title — title"
            assert summary and summary == e.analysis.summary


LONG_TITLE = (
    "cli: drop the --format flag (markdown is the only output now); the JSON writer, its schema tests, "
    "the docs page that described both formats and the examples in the README are gone with it, in one go"
)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_headline_shows_a_long_title_whole(run, tmp_path, lang):
    """The headline names its commits by their titles as written, however long: never cut to a
    fragment with an ellipsis (issue 33 §1)."""
    r = GitRepo(tmp_path / "proj")
    r.commit("Initial import", {"src/app/cli.py": CLI_V1}, when=datetime(2026, 1, 27, 10, tzinfo=SH))
    without = CLI_V1.replace(
        '    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")\n', ""
    )
    r.commit(LONG_TITLE, {"src/app/cli.py": without}, when=datetime(2026, 1, 28, 11, tzinfo=SH))
    proc = run("digest", "--repo", str(r.path), "--date", DAY.isoformat(), "--lang", lang)
    assert proc.returncode == 0, proc.stderr
    assert len(LONG_TITLE) > 150
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("### 📌"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("### "))
    headline = [line for line in lines[start:end] if line.startswith("- ")]
    assert any(LONG_TITLE in line for line in headline), headline
    assert not any("…" in line for line in headline)
    # one commit is one commit, in the stats and the meta line alike
    assert {"en": "1 commit on 2026-01-28 |", "zh": "2026-01-28 共 1 个提交 |"}[lang] in proc.stdout
    assert "1 commits" not in proc.stdout
