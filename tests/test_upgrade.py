"""The upgrade report's sections (bot/render/upgrade.py): what an upgrade must handle first, by the
analyses' own words (negations not counting), features and fixes by area, the lows counted, the
fork's groups — and every surface escapes the commits' text."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import (
    Analysis,
    ChangeType,
    Commit,
    Digest,
    DigestEntry,
    Downstream,
    ForkInfo,
    Importance,
    Window,
)
from bot.i18n import text
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from bot.render.text import render_text
from bot.render.upgrade import entry_text, fork_files, section_of, upgrade_report

URL = "https://github.com/acme/app"


def entry(n: int, title: str, kind=ChangeType.OTHER, level=Importance.MEDIUM, summary="", **more) -> DigestEntry:
    sha = f"{n:07x}" + "b" * 33
    commit = Commit(
        repo="acme/app",
        sha=sha,
        title=title,
        body="",
        author="Ada",
        committed_at=datetime(2026, 1, 20, 12, n, tzinfo=UTC),
        url=f"{URL}/commit/{sha}",
    )
    analysis = Analysis(change_type=kind, importance=level, importance_reason="", summary=summary or title, **more)
    return DigestEntry(commit=commit, analysis=analysis)


def digest(entries, lang="en", fork=None) -> Digest:
    tz = ZoneInfo("Asia/Shanghai")
    window = Window(
        datetime(2026, 1, 19, tzinfo=tz),
        datetime(2026, 1, 21, tzinfo=tz),
        "Asia/Shanghai",
        "v1.0..v1.1",
        base="a" * 40,
        head="b" * 40,
    )
    return Digest(
        repo="acme/app",
        branch="main",
        window=window,
        lang=lang,
        entries=tuple(entries),
        repo_url=URL,
        fork=fork,
    )


@pytest.mark.parametrize(
    "title,kind,summary,section",
    [
        ("feat!: new API", ChangeType.FEATURE, "", "features"),  # no breaking words in its analysis: a feature
        ("refactor: remove the v1 client", ChangeType.REFACTOR, "", "removals"),
        ("chore: deprecate --legacy", ChangeType.OTHER, "", "removals"),
        ("cli: 移除旧的导出命令", ChangeType.OTHER, "", "removals"),
        ("x", ChangeType.REMOVAL, "", "removals"),
        ("fix: the flag is no longer removed on save", ChangeType.BUGFIX, "", "fixes"),  # negated
        ("feat: compression defaults to zstd", ChangeType.FEATURE, "", "defaults"),
        ("feat: enable the cache by default", ChangeType.FEATURE, "", "defaults"),
        ("feat: 默认开启缓存", ChangeType.FEATURE, "", "defaults"),
        ("feat: the cache is not enabled by default", ChangeType.FEATURE, "", "features"),  # negated
        ("fix: escape HTML", ChangeType.SECURITY, "", "security"),
        ("fix: path traversal", ChangeType.BUGFIX, "Fixes CVE-2026-1234 in the upload handler", "security"),
        ("fix: off by one", ChangeType.BUGFIX, "", "fixes"),
        ("perf: faster", ChangeType.PERFORMANCE, "", "other"),
        # words inside other words are not the words
        ("feat: add an autoremove option", ChangeType.FEATURE, "", "features"),
        ("feat: unremoveable pins", ChangeType.FEATURE, "", "features"),
        ("feat: removeable pins", ChangeType.FEATURE, "", "features"),
        ("feat: a standby default mirror", ChangeType.FEATURE, "", "features"),
        ("fix: read the defaults token", ChangeType.BUGFIX, "", "fixes"),
        ("fix: the nondefault path", ChangeType.BUGFIX, "", "fixes"),
        ("fix: read the defaults table", ChangeType.BUGFIX, "", "fixes"),
        ("fix: a GHSAfe name", ChangeType.BUGFIX, "", "fixes"),
        ("feat: invulnerable mode", ChangeType.FEATURE, "", "features"),
        # the longer phrasings
        ("feat: drop   support for Python 3.8", ChangeType.FEATURE, "", "removals"),
        ("feat: delete the legacy exporter", ChangeType.FEATURE, "", "removals"),
        ("feat: the default\tbehaviour is now streaming", ChangeType.FEATURE, "", "defaults"),
        ("feat: workers default  to 8", ChangeType.FEATURE, "", "defaults"),
        ("feat: the timeout defaults is  now 30 s", ChangeType.FEATURE, "", "defaults"),
        ("feat: new   default for --jobs", ChangeType.FEATURE, "", "defaults"),
        ("fix: sanitize paths", ChangeType.BUGFIX, "Closes GHSA-abcd-1234-wxyz.", "security"),
        ("fix: parser", ChangeType.BUGFIX, "Fixes CVE-2026-12345.", "security"),
        ("fix: a vulnerability in the upload handler", ChangeType.BUGFIX, "", "security"),
        # a negation counts only in the same clause, and only as a word
        ("fix: does not touch the CLI. Removes the legacy exporter", ChangeType.BUGFIX, "", "removals"),
        ("fix: Notably removes the old exporter", ChangeType.BUGFIX, "", "removals"),
        ("fix: Piano roll removes the old exporter", ChangeType.BUGFIX, "", "removals"),
        # a removal of what users see, not of the project's own code (mypy's 1.20 titles, tune set)
        ("Remove --force-union-syntax flag (#20405)", ChangeType.OTHER, "", "removals"),
        ("Drop support for running with Python 3.9 (#20156)", ChangeType.OTHER, "", "removals"),
        ("chore: the --legacy option is now deprecated", ChangeType.OTHER, "", "removals"),
        ("Remove duplicate `TYPE_CHECKING` imports (#20878)", ChangeType.REFACTOR, "", "other"),
        ("Remove no longer needed Python 3.9 guards (#20321)", ChangeType.REFACTOR, "", "other"),
        ("Remove unnecessary `isinstance`s (#20670)", ChangeType.REFACTOR, "", "other"),
        ("Optimize bind_self() and deprecation checks (#19556)", ChangeType.PERFORMANCE, "", "other"),
        ("Replace deprecated _PY_IDENTIFIER uses (#20460)", ChangeType.REFACTOR, "", "other"),
        ("fix: drop empty rows", ChangeType.BUGFIX, "", "fixes"),
        ("feat: enable the cache by default in tests", ChangeType.FEATURE, "", "features"),
        ("refactor: 删除未使用的参数", ChangeType.REFACTOR, "", "other"),
        # the words are whole words, and a clause ends at punctuation or "and"
        ("feat: removeable flags", ChangeType.FEATURE, "", "features"),
        ("feat: undeprecate the --legacy option", ChangeType.FEATURE, "", "features"),
        ("fix: replace this deprecated call", ChangeType.BUGFIX, "", "fixes"),
        ("refactor: remove unsupported code paths", ChangeType.REFACTOR, "", "other"),
        ("fix: drop optionally empty rows", ChangeType.BUGFIX, "", "fixes"),
        ("feat: drop the --latest option", ChangeType.FEATURE, "", "removals"),
        ("feat: remove the testimonial option", ChangeType.FEATURE, "", "removals"),
        ("feat: remove the android option", ChangeType.FEATURE, "", "removals"),
        ("feat: remove the command flag", ChangeType.FEATURE, "", "removals"),
        ("fix: typo, then, remove the --legacy flag", ChangeType.BUGFIX, "", "removals"),
        ("tests remove the --x option", ChangeType.OTHER, "", "other"),
        ("fix: no longer remove it; remove the --legacy flag", ChangeType.BUGFIX, "", "removals"),
    ],
)
def test_sections_by_what_the_analysis_says(title, kind, summary, section):
    assert section_of(entry(1, title, kind, summary=summary)) == section


def test_the_offline_analysers_summary_is_the_authors_prose_and_only_the_title_counts():
    # the offline summary quotes the PR body: "Removing buffering…", "set provides a O(1) remove
    # operation" say nothing of what the commit removes for its users; a model's summary does
    body = "Removing buffering on file reads can make those reads like 20% faster, by default."
    offline = entry(1, "Microoptimise read buffering (#20810)", ChangeType.OTHER, summary=body, origin="offline")
    assert section_of(offline) == "other"
    removal = entry(2, "x", ChangeType.REMOVAL, origin="offline")  # a type the title's words gave it
    assert section_of(removal) == "other"
    dropped = entry(6, "Drop support for Python 3.9", ChangeType.OTHER, summary="It was EOL.", origin="offline")
    assert section_of(dropped) == "removals"  # the title alone says it
    modelled = entry(3, "cli: tidy up", ChangeType.OTHER, summary="Removes the deprecated --legacy flag.")
    assert section_of(modelled) == "removals"
    cve = entry(4, "fix: the parser", ChangeType.BUGFIX, summary="Fixes CVE-2026-12345.", origin="offline")
    assert section_of(cve) == "security"  # a CVE in the author's text is still a security fix
    # a merge on the first-parent line says what it does in its body's first line, the PR's title
    merge = entry(5, "Merge pull request #13971 from bluetech/disable-progress", ChangeType.OTHER, origin="offline")
    merge = dataclasses.replace(
        merge,
        commit=dataclasses.replace(
            merge.commit, body="terminal: disable terminal progress by default\n\nOn Windows too.", parents=("a", "b")
        ),
    )
    assert section_of(merge) == "defaults"
    unmerged = dataclasses.replace(merge, commit=dataclasses.replace(merge.commit, parents=("a",)))
    assert section_of(unmerged) == "other"  # a commit's body is the author's prose, as the summary is


def test_breaking_comes_first_and_reuses_the_changelogs_reading():
    e = entry(1, "refactor: remove v1", ChangeType.REMOVAL, risks=("This is a breaking change for v1 callers",))
    assert section_of(e) == "breaking"
    negated = entry(2, "refactor: tidy", ChangeType.REFACTOR, risks=("No breaking change.",))
    assert section_of(negated) == "other"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_order_areas_and_the_low_count(lang):
    es = [
        entry(1, "feat: a", ChangeType.FEATURE),
        entry(2, "fix: b", ChangeType.BUGFIX),
        entry(3, "feat: c", ChangeType.FEATURE),
        entry(4, "chore: deprecate x", ChangeType.OTHER),
        entry(5, "docs: y", ChangeType.DOCS, Importance.LOW),
        entry(6, "feat: z", ChangeType.FEATURE, Importance.LOW),
        entry(7, "fix: escape", ChangeType.SECURITY, Importance.HIGH),
    ]
    es.append(entry(8, "feat: d", ChangeType.FEATURE))
    es.append(entry(9, "fix: e", ChangeType.BUGFIX))
    areas = {
        es[0].commit.sha: "src/api",
        es[2].commit.sha: "src/cli",
        es[7].commit.sha: "src/cli",
        es[1].commit.sha: "src/web",
        es[8].commit.sha: "src/api",
    }
    r = upgrade_report(digest(es, lang), areas)
    assert [g.key for g in r.groups] == ["removals", "security", "features", "features", "fixes", "fixes"]
    fixes = text(lang, "upgrade.fixes")
    assert [g.heading for g in r.groups[4:]] == [  # as many in each: by name
        text(lang, "upgrade.group_area", section=fixes, area=area, n=1) for area in ("src/api", "src/web")
    ]
    feature = text(lang, "upgrade.features")
    # the area with more commits first
    assert r.groups[2].heading == text(lang, "upgrade.group_area", section=feature, area="src/cli", n=2)
    assert r.groups[3].heading == text(lang, "upgrade.group_area", section=feature, area="src/api", n=1)
    assert r.low == 2 and r.low_line == text(lang, "upgrade.low.other", n=2)
    assert not r.nothing
    only_low = upgrade_report(digest([es[4]], lang))
    assert only_low.groups == () and only_low.nothing == text(lang, "upgrade.nothing")


def test_the_fork_groups_name_conflicts_and_patched_files():
    fork = ForkInfo(name="org/our-fork", branch="main", merge_base="c" * 40, files=3)
    clash = entry(1, "fix: a", ChangeType.BUGFIX)
    touch = entry(2, "feat: b", ChangeType.FEATURE)
    clash = DigestEntry(clash.commit, clash.analysis, downstream=Downstream(("a.py",), True, 2))
    touch = DigestEntry(touch.commit, touch.analysis, downstream=Downstream(("b.py", "c.py"), False, 1))
    d = digest([clash, touch, entry(3, "docs", ChangeType.DOCS, Importance.LOW)], fork=fork)
    r = upgrade_report(d)
    keys = [g.key for g in r.groups]
    assert keys[-2:] == ["fork_conflicts", "fork_touches"]
    assert r.groups[-2].heading == text("en", "upgrade.fork_conflicts", fork="org/our-fork@main", n=1)
    assert [e.commit.sha for e in r.groups[-2].entries] == [clash.commit.sha]
    assert [e.commit.sha for e in r.groups[-1].entries] == [touch.commit.sha]  # each commit once
    md = render_report([d])
    assert "💥 Would conflict with org/our-fork@main (1)" in md and "files: b.py, c.py" in md
    clear = upgrade_report(digest([entry(4, "fix: d", ChangeType.BUGFIX)], fork=fork))
    assert clear.fork_clear == text("en", "upgrade.fork_clear", fork="org/our-fork@main")


HOSTILE = "feat: remove the legacy <!channel> *bold* <https://evil.example|click> [x](https://evil.example)"


def test_every_surface_escapes_the_commits_text():
    d = digest([entry(1, HOSTILE, ChangeType.FEATURE, Importance.HIGH)])
    report = upgrade_report(d)
    blocks = S.render(report)
    raw = json.dumps(blocks, ensure_ascii=False)
    assert "<!channel>" not in raw and "<https://evil.example|click>" not in raw
    shown = S.unescape("\n".join(t for m in blocks for b in m["blocks"] for t in S.plain_texts(b)))
    assert text("en", "upgrade.title", repo="acme/app", label="v1.0..v1.1") in shown
    assert "<!channel>" in shown  # shown literally, not as a mention
    cards = json.dumps(F.render_cards(report), ensure_ascii=False)
    assert "<at" not in cards and "[x](https://evil.example)" not in cards
    md = render_report([d])
    assert "[x](https://evil.example)" not in md
    console = render_text(report)
    assert "Upgrade report: acme/app v1.0..v1.1" in console and HOSTILE in console
    data = json.loads(render_json([d]))["digests"][0]
    assert data["upgrade"]["sections"][0]["key"] == "removals"
    assert data["window"]["base"] == "a" * 40


def test_the_report_link_leads_to_the_full_report():
    from dataclasses import replace

    report = replace(
        upgrade_report(digest([entry(1, "fix: a", ChangeType.BUGFIX)])), report_url="https://bot.example/r/x"
    )
    raw = json.dumps(S.render(report)) + json.dumps(F.render_cards(report))
    assert raw.count("https://bot.example/r/x") == 2
    assert "https://bot.example/r/x" in render_text(report)
    bad = replace(report, report_url="javascript:alert(1)")
    assert "javascript:" not in json.dumps(S.render(bad)) + json.dumps(F.render_cards(bad))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_report_page_of_a_range_leads_with_its_upgrade_sections(lang):
    from bot.report.page import render_page
    from tests.shared.report_page import Page

    d = digest(
        [
            entry(1, "feat: add the --since flag", ChangeType.FEATURE),
            entry(2, "chore: remove the legacy exporter", ChangeType.REFACTOR),
            entry(3, "docs: typo", ChangeType.DOCS, Importance.LOW),
            entry(4, "fix: <!channel> <script>x</script>", ChangeType.BUGFIX, Importance.HIGH),
        ],
        lang=lang,
    )
    page = Page(render_page(d))
    shown = page.text
    title = text(lang, "upgrade.title", repo="acme/app", label="v1.0..v1.1")
    removals = text(lang, "upgrade.group", section=text(lang, "upgrade.removals"), n=1)
    features = text(lang, "upgrade.group", section=text(lang, "upgrade.features"), n=1)
    assert title in shown and removals in shown and features in shown
    assert shown.index(removals) < shown.index(features) < shown.index(text(lang, "upgrade.fixes"))
    assert text(lang, "upgrade.low.one", n=1) in shown
    assert "upgrade" in page.ids and "fix: <!channel> <script>x</script>" in shown and "script" not in page.tags
    listed = [h for h in page.hrefs if h.startswith("#c-")]
    assert len(listed) >= 3 and all(h[1:] in page.ids for h in listed)  # each lands on its commit's analysis
    day = replace_window(d)
    assert "upgrade" not in Page(render_page(day)).ids  # a day's page has no upgrade section


def replace_window(d: Digest) -> Digest:
    from dataclasses import replace

    return replace(d, window=replace(d.window, base=None, head=None, label="2026-01-20"))


def test_a_listed_commit_says_its_summary_else_its_title_and_only_fork_groups_name_files():
    said = entry(1, "feat: a title", ChangeType.FEATURE, summary="The summary.")
    blank = DigestEntry(said.commit, replace(said.analysis, summary="  "))
    assert entry_text(said) == "The summary." and entry_text(blank) == "feat: a title"
    assert entry_text(DigestEntry(said.commit, None, error="unread")) == "feat: a title"
    touched = DigestEntry(said.commit, said.analysis, downstream=Downstream(("a.py", "b.py"), False, 1))
    fork = ForkInfo(name="org/f", branch="main", merge_base="c" * 40, files=2)
    r = upgrade_report(digest([touched], fork=fork))
    features, touches = r.groups
    assert fork_files(touches, touched, "en") == text("en", "upgrade.files", files="a.py, b.py")
    assert fork_files(features, touched, "en") == ""  # the same commit in a section: no file list
    assert fork_files(touches, said, "en") == ""
