"""Release notes for a window (`digest --format changelog`): the digest's analyses in a
changelog's sections, both languages, commit text escaped, and the CLI end to end."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import Analysis, ChangeType, Commit, Digest, DigestEntry, Importance, Window
from bot.i18n import text
from bot.render.changelog import is_breaking, render_changelog, section_of
from tests.gitrepo import GitRepo
from tests.shared.cli import SH

URL = "https://github.com/acme/app"


def entry(n: int, title: str, kind: ChangeType, level: Importance, *, author="Ada Lovelace", pr=None, **analysis):
    sha = f"{n:07x}" + "a" * 33
    commit = Commit(
        repo="acme/app",
        sha=sha,
        title=title,
        body="",
        author=author,
        committed_at=datetime(2026, 1, 28, 12, n, tzinfo=UTC),
        url=f"{URL}/commit/{sha}",
        pr_number=pr,
    )
    values = {"importance_reason": "", "summary": f"summary of {title}", **analysis}
    return DigestEntry(commit=commit, analysis=Analysis(change_type=kind, importance=level, **values))


def digest(lang: str = "en", entries=None, repo_url: str | None = URL) -> Digest:
    tz = ZoneInfo("Asia/Shanghai")
    window = Window(
        datetime(2026, 1, 20, tzinfo=tz), datetime(2026, 1, 23, tzinfo=tz), "Asia/Shanghai", "2026-01-20..2026-01-22"
    )
    if entries is None:
        entries = [
            entry(1, "docs: explain export", ChangeType.DOCS, Importance.MEDIUM, author="Grace Hopper"),
            entry(2, "feat: CSV export", ChangeType.FEATURE, Importance.HIGH, pr=7),
            entry(3, "fix: empty rows", ChangeType.BUGFIX, Importance.MEDIUM, author="alan turing", pr=8),
            entry(
                4,
                "refactor: drop v1 API",
                ChangeType.REMOVAL,
                Importance.HIGH,
                risks=("This is a breaking change for v1 callers",),
            ),
            entry(5, "perf: faster writer", ChangeType.PERFORMANCE, Importance.MEDIUM),
            entry(6, "fix: escape CSV cells", ChangeType.SECURITY, Importance.HIGH),
            entry(7, "ci: bump runner", ChangeType.CI_BUILD, Importance.MEDIUM),
            entry(8, "tests: more cases", ChangeType.TESTS, Importance.LOW, author="Grace Hopper"),
            entry(9, "style: typo", ChangeType.OTHER, Importance.LOW, author="Bob"),
            entry(10, "feat: tiny flag", ChangeType.FEATURE, Importance.LOW),
        ]
    return Digest(repo="acme/app", branch="main", window=window, lang=lang, entries=tuple(entries), repo_url=repo_url)


def headings(md: str) -> list[str]:
    return [line[3:] for line in md.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sections_in_order_only_when_non_empty(lang):
    md = render_changelog(digest(lang))
    keys = ["breaking", "features", "fixes", "performance", "security", "docs", "other", "contributors"]
    assert headings(md) == [text(lang, f"changelog.{k}") for k in keys]
    assert md.startswith(f"# {text(lang, 'changelog.title', repo='acme/app', label='2026-01-20..2026-01-22')}")
    # Only features and fixes: the other sections are left out.
    two = digest(
        lang, [entry(1, "a", ChangeType.FEATURE, Importance.HIGH), entry(2, "b", ChangeType.BUGFIX, Importance.MEDIUM)]
    )
    assert headings(render_changelog(two)) == [
        text(lang, f"changelog.{k}") for k in ("features", "fixes", "contributors")
    ]


def section(md: str, heading: str) -> list[str]:
    lines = md.splitlines()
    start = lines.index(f"## {heading}") + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("- ")), len(lines))
    return lines[start:end]


def test_one_line_per_above_low_commit_with_sha_and_pr_link():
    md = render_changelog(digest())
    features = section(md, text("en", "changelog.features"))
    assert features == [
        f"- summary of feat: CSV export ([`0000002`]({URL}/commit/{2:07x}{'a' * 33}), [#7]({URL}/pull/7))"
    ]
    assert section(md, text("en", "changelog.breaking")) == [
        f"- summary of refactor: drop v1 API ([`0000004`]({URL}/commit/{4:07x}{'a' * 33}))"
    ]
    assert section(md, text("en", "changelog.other")) == [
        f"- summary of ci: bump runner ([`0000007`]({URL}/commit/{7:07x}{'a' * 33}))"
    ]
    for low in ("tests: more cases", "style: typo", "tiny flag"):
        assert low not in md
    # Without a web URL the PR is named, not linked; without a summary the title stands.
    bare = Commit(
        repo="app",
        sha="f" * 40,
        title="feat: add it",
        body="",
        author="A",
        committed_at=datetime(2026, 1, 21, tzinfo=UTC),
        pr_number=12,
    )
    a = Analysis(change_type=ChangeType.FEATURE, importance=Importance.MEDIUM, importance_reason="", summary=" ")
    assert "- feat: add it (`fffffff`, #12)" in render_changelog(digest("en", [DigestEntry(bare, a)], repo_url=None))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_low_commits_counted_in_one_line_and_contributors_sorted(lang):
    md = render_changelog(digest(lang))
    assert text(lang, "changelog.low.other", n=3) in md
    assert section(md, text(lang, "changelog.contributors")) == [
        "- Ada Lovelace",
        "- alan turing",
        "- Bob",
        "- Grace Hopper",
    ]
    one = digest(
        lang, [entry(1, "a", ChangeType.FEATURE, Importance.HIGH), entry(2, "b", ChangeType.OTHER, Importance.LOW)]
    )
    assert text(lang, "changelog.low.one", n=1) in render_changelog(one)
    only = render_changelog(digest(lang, [entry(2, "b", ChangeType.OTHER, Importance.LOW)]))
    assert text(lang, "changelog.only_low.one", n=1) in only
    assert headings(only) == [text(lang, "changelog.contributors")]


def test_breaking_is_what_the_analysis_says():
    def e(level=Importance.HIGH, **kw):
        return entry(1, "x", ChangeType.REFACTOR, level, **kw)

    for lang in ("en", "zh"):  # the offline analyser's own sentences, in either language
        assert is_breaking(e(importance_reason=text(lang, "offline.breaking.declared")))
        assert is_breaking(e(risks=(text(lang, "offline.breaking.callers_fail"),)))
    assert is_breaking(e(Importance.MEDIUM, importance_reason="Breaking change: the config key is renamed"))
    assert is_breaking(e(risks=("这是一个不兼容变更",)))
    assert not is_breaking(e(risks=("A non-breaking change to the parser",)))
    assert not is_breaking(e(risks=("No breaking changes expected",)))
    assert not is_breaking(e(Importance.LOW, importance_reason="Breaking change in a test helper"))
    assert not is_breaking(e(importance_reason="Avoid breaking call chains"))
    assert section_of(e(risks=("没有不兼容变更",))) == "other"


HOSTILE = "[click](javascript:alert(1)) <script>x</script> **bold** `code` | pipe"


def test_hostile_commit_text_is_escaped():
    md = render_changelog(
        digest(
            "en",
            [
                entry(1, "t", ChangeType.FEATURE, Importance.HIGH, summary=HIGH_SUMMARY),
                entry(2, "# heading\n## more](javascript:x)", ChangeType.BUGFIX, Importance.MEDIUM, summary=""),
                entry(3, "x", ChangeType.OTHER, Importance.LOW, author="<img src=x onerror=alert(1)>\x1b[2J"),
            ],
        )
    )
    assert "<script>" not in md and "<img" not in md and "\x1b" not in md
    assert not re.search(r"(?<!\\)\]\(javascript:", md) and not re.search(r"(?<!\\)\[click", md)
    assert "\\[click\\](javascript:alert(1)) &lt;script&gt;" in md
    assert "**bold** `code` \\| pipe" in md  # a summary is prose, as in the report: its code stays code
    assert "- \\# heading \\#\\# more\\]" in md
    assert not any(line.startswith("#") and "heading" in line for line in md.splitlines())
    # The only headings are the bot's own.
    assert headings(md) == [text("en", f"changelog.{k}") for k in ("features", "fixes", "contributors")]


HIGH_SUMMARY = HOSTILE


def test_markdown_is_escaped_once_for_markdown_q_and_a_stays_and_code_stays_code():
    """Seen in the Markdown and the changelog: `Q&amp;A` in headings and lines, and a summary's
    code shown as `\\`ChatService\\``. Read raw (a terminal) or rendered, they say what was written."""
    from bot.render.markdown import render_report

    entries = [
        entry(
            1,
            "Q&A prompt: every piece redacted (R&D)",
            ChangeType.FEATURE,
            Importance.HIGH,
            summary="Touches `ChatService` & `_config`; Q&A answers quote it.",
        ),
        entry(2, "Q&A core, CLI digest/ask", ChangeType.FEATURE, Importance.MEDIUM, summary=""),
    ]
    notes = render_changelog(digest("en", entries))
    assert "- Touches `ChatService` & `_config`; Q&A answers quote it. (" in notes
    assert "- Q&A core, CLI digest/ask (" in notes  # no summary: the title, as written
    report = render_report([digest("en", entries)])
    assert "#### Q&A prompt: every piece redacted (R&D)" in report
    assert "Touches `ChatService` & `_config`; Q&A answers quote it." in report
    for shown in (notes, report):
        assert "&amp;" not in shown and "\\`" not in shown


def test_empty_window_says_so():
    md = render_changelog(digest("zh", []))
    assert text("zh", "changelog.empty", repo="acme/app", label="2026-01-20..2026-01-22", tz="Asia/Shanghai") in md
    assert headings(md) == []


# --- the command line ------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "widgets")
    r.commit(
        "feat: add CSV export (#7)",
        {"src/export.py": "import csv\n\ndef export(rows):\n    return csv.writer(rows)\n"},
        when=datetime(2026, 1, 20, 9, 30, tzinfo=SH),
    )
    r.commit(
        "feat!: rename export() to write_csv()\n\nBREAKING CHANGE: export() is gone.",
        {"src/export.py": "import csv\n\ndef write_csv(rows):\n    return csv.writer(rows)\n"},
        when=datetime(2026, 1, 21, 10, 0, tzinfo=SH),
        author="Grace Hopper",
    )
    r.commit("docs: typo", {"README.md": "widgets\n"}, when=datetime(2026, 1, 22, 11, 0, tzinfo=SH), author="Bob")
    return r


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cli_writes_release_notes_for_a_range(run, repo, tmp_path, lang):
    out = tmp_path / "notes.md"
    proc = run(
        "digest",
        "--repo",
        str(repo.path),
        "--date",
        "2026-01-20..2026-01-22",
        "--lang",
        lang,
        "--format",
        "changelog",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert md.startswith(f"# {text(lang, 'changelog.title', repo='widgets', label='2026-01-20..2026-01-22')}")
    hs = headings(md)
    assert hs[0] == text(lang, "changelog.breaking") and hs[-1] == text(lang, "changelog.contributors")
    assert section(md, text(lang, "changelog.contributors")) == ["- Ada Lovelace", "- Bob", "- Grace Hopper"]
    assert repo.git("rev-parse", "--short=7", "HEAD~1").strip() in "\n".join(section(md, hs[0]))


def test_cli_changelog_to_a_folder_is_bad_input(run, repo, tmp_path):
    proc = run(
        "digest", "--repo", str(repo.path), "--date", "2026-01-21", "--format", "changelog", "--out", str(tmp_path)
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stdout == ""
