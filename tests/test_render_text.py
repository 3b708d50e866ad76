"""The terminal chat's text and the Markdown report (pure), as a reader sees them: every part of a
digest in its place, untrusted text inert, nothing a terminal would execute."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.chat_platform import AnswerHeader, CommitChoice, CommitDetail, DigestParent, LowCommits, Notice
from bot.core.models import Analysis, ChangeType, Commit, Coverage, Digest, DigestEntry, Importance, Insights
from bot.core.window import day_window
from bot.render.jsonout import render_json
from bot.render.markdown import Slugger, esc, esc_rich, render_report
from bot.render.text import render_text, terminal_safe

WHEN = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)  # 11:00 in Shanghai
REPO_URL = "https://github.com/acme/widgets"


def commit(n: int, title: str, **kw) -> Commit:
    sha = f"{n:x}" * 40
    return Commit(
        repo="acme/widgets",
        sha=sha[:40],
        title=title,
        body=kw.pop("body", ""),
        author=kw.pop("author", "Ada"),
        committed_at=WHEN - timedelta(minutes=n),
        url=f"{REPO_URL}/commit/{sha[:40]}",
        **kw,
    )


def analysis(importance: Importance, **kw) -> Analysis:
    values = dict(
        change_type=ChangeType.FEATURE,
        importance=importance,
        importance_reason="Changes the public CLI.",
        summary="Adds a flag.",
        impact="Users of the CLI.",
        insights=Insights(architecture="Keeps layers.", performance="", security="No new input."),
        risks=("Locale parsing.",),
        recommendations=("Document it.",),
        origin="llm",
        coverage=Coverage(3, 2, omitted=(("poetry.lock", "lockfile"),)),
    )
    values.update(kw)
    return Analysis(**values)


def entry(c: Commit, a: Analysis | None, error: str = "") -> DigestEntry:
    return DigestEntry(c, a, error=error)


def digest(entries, lang="en", headline=("Export gained a flag.",), origin="llm") -> Digest:
    return Digest(
        repo="acme/widgets",
        branch="main",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang=lang,
        entries=tuple(entries),
        headline=tuple(headline),
        headline_origin=origin,
        repo_url=REPO_URL,
    )


HIGH = entry(commit(1, "feat!: remove export_v1 (#12)", pr_number=12), analysis(Importance.HIGH))
MEDIUM = entry(commit(2, "fix: retry uploads"), analysis(Importance.MEDIUM, importance_reason="Touches retries."))
LOW = entry(commit(3, "docs: typo"), analysis(Importance.LOW, summary="Fixes a typo.", impact="Nobody."))
DAY = digest([HIGH, MEDIUM, LOW])

GOLDEN = __import__("pathlib").Path(__file__).parent / "golden"


def test_the_report_as_a_reader_sees_it():
    """Every part in its place (reviewed by hand: TOC anchors resolve on GitHub, low commits
    show only their summary, PR link, local times in the channel's zone)."""
    assert render_report([DAY]) == (GOLDEN / "report_en.md").read_text()


def test_the_terminal_parent_and_detail():
    assert render_text(DigestParent(DAY, "low")) == (
        "Daily update report (2026-01-28) · acme/widgets\n"
        "3 commits on 2026-01-28 | 🔴 high 1 | 🟡 medium 1 | 🟢 low 1\n"
        "📌 Headlines\n  • Export gained a flag.\n"
        "🔴 High importance (1)\n  🔴 1111111 feat!: remove export_v1 (#12) — Changes the public CLI."
    )
    assert render_text(CommitDetail(DAY, HIGH)) == (
        "🔴 1111111 feat!: remove export_v1 (#12)\n"
        f"  {REPO_URL}/commit/{'1' * 40}\n"
        "  🎯 Change type: Feature · ⚡ Importance: 🔴 High — Changes the public CLI.\n"
        "  📋 Summary: Adds a flag.\n  🧭 Impact: Users of the CLI.\n"
        "  🔍 Technical insight / Architecture: Keeps layers.\n"
        "  🔍 Technical insight / Security: No new input.\n"
        "  ⚠️ Risks:\n    - Locale parsing.\n  💡 Recommendations:\n    - Document it.\n"
        "  📁 Coverage: 2/3 files analysed; not shown: poetry.lock (lockfile)"
    )
    assert render_text(LowCommits(DAY, (LOW,))) == "🟢 Low importance (1)\n  🟢 3333333 docs: typo — Fixes a typo."


def test_no_headline_no_highs_and_an_offline_headline():
    quiet = digest([MEDIUM, LOW], headline=())
    assert render_text(DigestParent(quiet, "low")) == (
        "Daily update report (2026-01-28) · acme/widgets\n2 commits on 2026-01-28 | 🔴 high 0 | 🟡 medium 1 | 🟢 low 1"
    )
    offline = digest([LOW], origin="offline")
    shown = render_text(DigestParent(offline, "low"))
    assert "📌 Headlines (" in shown and "  • Export gained a flag." in shown
    report = render_report([offline])
    assert "### 📌 Headlines\n\n- Export gained a flag.\n\n_" in report
    assert "### 📌 Headlines" not in render_report([quiet])


def test_unanalysed_and_fallback_entries():
    failed = entry(commit(4, "feat: big"), None, error="the LLM timed out")
    fallback = entry(
        commit(5, "feat: other"),
        analysis(Importance.MEDIUM, origin="fallback", note="LLM answer invalid"),
        error="the LLM answer was invalid",
    )
    d = digest([failed, fallback])
    text = render_text(CommitDetail(d, failed))
    assert text.splitlines()[2:] == ["  ⚠️ This commit could not be analysed: the LLM timed out"]  # nothing else
    shown = render_text(CommitDetail(d, fallback))
    assert "could not be analysed" not in shown and "LLM answer invalid" in shown  # the fallback explains itself
    report = render_report([d])
    assert (
        "Author Ada · 2026-01-28 10:56:00\n\n> ⚠️ This commit could not be analysed: the LLM timed out\n\n---\n"
        in report
    )
    assert report.count("the LLM timed out") == 1 and "the LLM answer was invalid" not in report


def test_hostile_commit_text_cannot_drive_the_terminal():
    evil = "fix: \x1b]0;pwned\x07 title \x1b[2J\u202egnp.exe\x00 end"
    e = entry(
        commit(6, evil, author="Mallory\x1b[31m"),
        analysis(Importance.HIGH, summary="ok\x1b[1mbold", risks=("\u2066hidden\u2069",)),
    )
    d = digest([e], headline=("line\x1b[2K",))
    everything = "\n".join(
        [
            render_text(DigestParent(d, "low")),
            render_text(CommitDetail(d, e)),
            render_text(LowCommits(d, (e,))),
            render_text(CommitChoice("which\x1b[2J?", (e.commit,))),
            render_text(AnswerHeader("eve\x07", "why\u202e?", e.commit)),
            render_text(Notice("done\x1b[0m")),
        ]
    )
    for bad in ("\x1b", "\x07", "\x00", "\u202e", "\u2066", "\u2069"):
        assert bad not in everything, repr(bad)
    assert "title" in everything and "gnp.exe" in everything and "hidden" in everything
    assert terminal_safe("a\tb\nc\x1bd\re\u200bf") == "a\tb\ncd\ne�f"  # tabs and newlines stay


def test_choice_and_answer_header_lines():
    c1, c2 = commit(7, "fix: one"), commit(8, "fix: two")
    assert render_text(CommitChoice("which fix?", (c1, c2), lang="en")).splitlines()[1:] == [
        "  1. 7777777 fix: one",  # numbered: the terminal picks one with `reply N 1`
        "  2. 8888888 fix: two",
    ]
    assert render_text(AnswerHeader("ada", "why?", c1)) == "❓ ada: why?  (7777777 fix: one)"
    with pytest.raises(TypeError):
        render_text(object())


@pytest.mark.parametrize(
    "text,shown",
    [
        (
            "a [link](https://evil.example) <b>x</b> | y",
            "a \\[link\\](https://evil.example) &lt;b&gt;x&lt;/b&gt; \\| y",
        ),
        ("*bold* _it_ `code` #tag ~s~ !img & \\", "\\*bold\\* \\_it\\_ \\`code\\` \\#tag \\~s\\~ \\!img & \\\\"),
        # `&` is markup only where it starts a character reference: Q&A stays Q&A
        ("Q&A, R&D & co; &amp; &#38; &x", "Q&A, R&D & co; &amp;amp; &amp;\\#38; &x"),
        ("two\n  lines", "two lines"),
    ],
)
def test_one_line_text_renders_literally(text, shown):
    assert esc(text) == shown


def test_marks_inside_a_line_are_left_alone():
    assert esc_rich("use C# or F# --- both ok") == "use C# or F# --- both ok"


def test_prose_keeps_code_and_lists_but_no_structure():
    assert esc_rich("# Heading\n```\n---\n- item `x`\n\n> quote [a](b)\r\n=====") == (
        "\\# Heading  \n\\```  \n\\---  \n- item `x`  \n&gt; quote \\[a\\](b)  \n\\====="
    )


def test_repeated_headings_get_numbered_anchors_like_github():
    s = Slugger()
    assert [s.slug(t) for t in ("Fix: Bug!", "fix  bug", "Fix: Bug!", "fix-bug-1", "修复 Bug_2")] == [
        "fix-bug",
        "fix-bug-1",
        "fix-bug-2",
        "fix-bug-1-1",
        "修复-bug_2",
    ]


def test_an_empty_day_and_no_digest():
    empty = digest([], headline=())
    assert render_report([empty]).endswith(
        "> branch main · time zone Asia/Shanghai · 0 commits\n\n"
        "No new commits in acme/widgets on 2026-01-28 (Asia/Shanghai).\n"
    )
    assert render_report([]) == ""


def test_reverts_and_commits_without_links():
    reverting = entry(commit(9, 'Revert "feat: x"', reverts="a" * 40), analysis(Importance.MEDIUM))
    local = Commit(
        repo="widgets", sha="b" * 40, title="chore: local", body="", author="Ada", committed_at=WHEN, url=None
    )
    d = Digest(
        repo="widgets",
        branch="main",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang="en",
        entries=(reverting, entry(local, analysis(Importance.LOW))),
        headline=(),
        headline_origin="llm",
        repo_url=None,
    )
    report = render_report([d])
    assert "↩️ Reverts [`aaaaaaa`]" not in report  # no repository link to point at
    assert "↩️ Reverts `aaaaaaa`" in report
    assert "**SHA**: `bbbbbbb` · Author Ada" in report and "View commit" not in report.split("chore: local")[-1]
    assert render_text(CommitDetail(d, d.entries[1])).splitlines()[1].startswith("  🎯")  # no empty link line


def test_a_revert_links_the_reverted_commit():
    reverting = entry(commit(9, 'Revert "feat: x"', reverts="a" * 40), analysis(Importance.MEDIUM))
    assert f"\n\n↩️ Reverts [`aaaaaaa`]({REPO_URL}/commit/{'a' * 40})" in render_report([digest([reverting])])


def test_json_output_keeps_everything():
    import json

    doc = json.loads(render_json([DAY]))
    first = doc["digests"][0]["entries"][0]
    assert doc["schema"] == "digest-bot/digest@1" and first["importance"] == "high"
    assert first["coverage_line"] == "2/3 files analysed; not shown: poetry.lock (lockfile)"
    assert [e["importance"] for e in doc["digests"][0]["entries"]] == ["high", "medium", "low"]


def test_json_coverage_line_only_where_there_is_coverage():
    import json

    unmeasured = entry(commit(10, "feat: a"), analysis(Importance.MEDIUM, coverage=None))
    failed = entry(commit(11, "feat: b"), None, error="the LLM timed out")
    doc = json.loads(render_json([digest([unmeasured, failed])]))
    assert [e["coverage_line"] for e in doc["digests"][0]["entries"]] == [None, None]
    assert doc["digests"][0]["entries"][1]["analysis"] is None
    assert doc["digests"][0]["stats"] == {"total": 2, "high": 0, "medium": 2, "low": 0}


def test_json_is_readable_utf8_with_two_space_indents():
    zh = digest([entry(commit(12, "修复：导出"), analysis(Importance.LOW, summary="修复导出。"))], lang="zh")
    text = render_json([zh])
    assert text.startswith('{\n  "schema": "digest-bot/digest@1",\n  "digests": [\n    {\n')
    assert '"title": "修复：导出"' in text and "\\u" not in text and text.endswith("}\n")


def test_commit_anchors_skip_the_report_s_own_headings():
    """GitHub numbers repeated headings in document order: a commit titled like the report, the
    repository or a section gets the next number, and its links must say so."""
    titles = ["Daily update report (2026-01-28)", "acme/widgets", "🗂 Commits"]
    d = digest([entry(commit(20 + i, t), analysis(Importance.LOW)) for i, t in enumerate(titles)])
    report = render_report([d])
    for anchor in ("#daily-update-report-2026-01-28-1", "#acmewidgets-1", "#-commits-1"):
        assert f"]({anchor})" in report, anchor


def test_multi_line_insights_and_bullets_stay_inside_their_item():
    a = analysis(
        Importance.HIGH,
        insights=Insights(architecture="Splits the API.\nKeeps the CLI.", performance="", security=""),
        risks=("Locale\nparsing.",),
        recommendations=(),
    )
    report = render_report([digest([entry(commit(30, "feat: split"), a)])])
    assert "- **Architecture**: Splits the API.  \n  Keeps the CLI." in report
    assert "**⚠️ Risks**\n\n- Locale  \n  parsing.\n" in report and "Recommendations" not in report


def test_no_insights_no_insight_heading():
    a = analysis(Importance.HIGH, insights=Insights(architecture="", performance="", security=""))
    report = render_report([digest([entry(commit(31, "feat: plain"), a)])])
    assert "Technical insight" not in report and "**⚠️ Risks**" in report
