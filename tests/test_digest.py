"""The digest engine end to end: a fake GitHub and a fake LLM over HTTP, real Redis, the real
SDKs. Assertions are on the report a reader gets and on what the fakes were asked."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.window import day_window
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from tests.fakes.github_server import FakeFile
from tests.fakes.openai_server import FakeOpenAI, Reply, analysis_json, default_responder

SH = ZoneInfo("Asia/Shanghai")
REPO = "vllm-project/vllm"
DAY = date(2026, 1, 28)
WINDOW = day_window(DAY, "Asia/Shanghai")
LATER = lambda: datetime(2026, 2, 1, tzinfo=UTC)  # noqa: E731 — the window is finished


def day_of_commits(fake):
    fake.add_repo(REPO)
    fake.add_commit(REPO, "init", committed_at=datetime(2026, 1, 27, 12, tzinfo=SH), files=[FakeFile("README.md")])
    shas = {
        "marlin": fake.add_commit(
            REPO,
            "[Quantization][Deprecation] Remove Marlin 24 (#32688)\n\nRemoves the sparse kernels.\n\n"
            "Signed-off-by: Robert Shaw <robert@example.com>",
            committed_at=datetime(2026, 1, 28, 23, 54, 59, tzinfo=SH),
            author="Robert Shaw",
            files=[
                FakeFile("csrc/quantization/marlin/sparse/kernel.cu", "removed", 0, 900),
                FakeFile("vllm/_custom_ops.py", "modified", 2, 60),
            ],
        ),
        "pipe": fake.add_commit(
            REPO,
            "[Docs] Explain a | b and `x` in the table (#33071)",
            committed_at=datetime(2026, 1, 28, 14, 37, 9, tzinfo=SH),
            author="Maryam | Tahhan",
            files=[FakeFile("docs/cpu.md", "modified", 5, 2)],
        ),
        "midnight": fake.add_commit(
            REPO,
            "[BugFix] Fix P/D with non-MoE DP (#33037)",
            committed_at=datetime(2026, 1, 28, 0, 0, 0, tzinfo=SH),
            author="Nick Hill",
            files=[FakeFile("vllm/v1/engine/core.py", "modified", 20, 4)],
        ),
    }
    fake.add_commit(REPO, "next day", committed_at=datetime(2026, 1, 29, 0, 0, 0, tzinfo=SH), files=[FakeFile("x.py")])
    fake.add_pull(REPO, 32688, body="## Purpose\nRemove Marlin 24.")
    return shas


@pytest.fixture
def services_for(make_services):
    """Services whose clock is past the day under test (the window is finished)."""
    return lambda **overrides: make_services(LATER, **overrides)


# --- an independent check that every Markdown link resolves -------------------------------------


def _heading_text(markdown_heading: str) -> str:
    text = re.sub(r"\\(.)", r"\1", markdown_heading)  # backslash escapes render as the character
    return text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")


def _github_slug(text: str) -> str:
    out = "".join(
        ch
        for ch in text.lower()
        if ch in " -_" or (unicodedata.category(ch)[0] in "LMN" and unicodedata.category(ch) != "No")
    )
    return out.replace(" ", "-")


def assert_links_resolve(markdown: str) -> int:
    anchors, counts = set(), {}
    for line in markdown.splitlines():
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            base = _github_slug(_heading_text(m.group(2)).strip())
            slug = base if base not in counts else f"{base}-{counts[base]}"
            counts[base] = counts.get(base, 0) + 1
            anchors.add(slug)
    links = re.findall(r"\]\(#([^)]+)\)", markdown)
    missing = [link for link in links if link not in anchors]
    assert not missing, f"unresolved anchors: {missing}"
    return len(links)


# --- tests ----------------------------------------------------------------------------------------


async def test_llm_digest_is_complete_grouped_and_linked(fake_github, services_for):
    shas = day_of_commits(fake_github)
    importance = {shas["marlin"]: "high", shas["pipe"]: "low", shas["midnight"]: "medium"}

    def responder(req):
        text = req["messages"][-1]["content"]
        sha = next((s for s in importance if f"提交 {s[:7]}" in text), None)
        if sha is None:
            return None  # the headline call: default bullets
        return analysis_json(
            "zh",
            importance=importance[sha],
            summary=f"{sha[:7]} 的摘要",
            risks=["Loads of <b>risk</b> [click](https://evil.example)"],
        )

    with FakeOpenAI(responder=lambda r: responder(r) or Reply()) as llm:
        s = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-digest-0000",
            default_lang="zh",
        )
        digest = await s.builder.build(s.source(REPO), WINDOW, "zh")

    assert [e.commit.sha for e in digest.entries] == [shas["marlin"], shas["pipe"], shas["midnight"]]
    assert [e.analysis.origin for e in digest.entries] == ["llm"] * 3
    assert digest.headline and digest.headline_origin == "llm"
    md = render_report([digest])
    assert md.startswith("# 每日更新报告（2026-01-28）\n\n## vllm-project/vllm")
    assert "> 2026-01-28 共 3 个提交 | 🔴 高 1 | 🟡 中 1 | 🟢 低 1" in md
    assert assert_links_resolve(md) >= 8  # table + TOC links
    # high before medium before low, each commit exactly once as a heading
    positions = [
        md.index(f"#### {t}")
        for t in (
            "\\[Quantization\\]\\[Deprecation\\] Remove Marlin 24 (\\#32688)",
            "\\[BugFix\\] Fix P/D with non-MoE DP (\\#33037)",
            "\\[Docs\\] Explain a \\| b and \\`x\\` in the table (\\#33071)",
        )
    ]
    assert positions == sorted(positions)
    # the table cell's pipe is escaped, so the row still has exactly 3 columns
    row = next(line for line in md.splitlines() if "Explain a" in line and line.startswith("| "))
    assert len(re.findall(r"(?<!\\)\|", row)) == 4
    # no trailers, no e-mail addresses; LLM text cannot inject HTML or links
    assert "Signed-off-by" not in md and "@example.com" not in md
    assert "<b>" not in md and not re.search(r"(?<!\\)\]\(https://evil", md)
    assert f"https://github.com/{REPO}/commit/{shas['marlin']}" in md
    assert re.findall(r"^## .*$", md, flags=re.M) == ["## vllm-project/vllm"]  # one ## per repository
    assert "📁 覆盖：" in md  # every analysed commit has a coverage line


async def test_rerun_makes_no_llm_call_and_no_fetch(fake_github, services_for):
    day_of_commits(fake_github)
    with FakeOpenAI() as llm:
        s = await services_for(
            github_api_url=fake_github.url, openai_base_url=llm.url, openai_api_key="sk-test-1234567890"
        )
        first = await s.builder.build(s.source(REPO), WINDOW, "en")
        calls, requests = len(llm.requests), len(fake_github.requests)
        assert calls == 4  # three commits + the headline
        again = await s.builder.build(s.source(REPO), WINDOW, "en")
        assert len(llm.requests) == calls and len(fake_github.requests) == requests
        assert replace(again, cost=None) == replace(first, cost=None)
        assert (again.cost.tokens, again.cost.cached, again.cost.earlier_tokens) == (0, 3, first.cost.tokens)

        # Even with the digest cache off, analyses are cached: no LLM call, no per-commit fetch; and
        # so is the headline, by what it is made from (the same commits with the same analyses).
        s2 = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-1234567890",
            digest_cache_ttl=0,
            redis_prefix=s.settings.redis_prefix,
        )
        before = len(fake_github.requests)
        await s2.builder.build(s2.source(REPO), WINDOW, "en")
        per_commit = [r for r in fake_github.requests[before:] if re.search(r"/commits/[0-9a-f]{40}$", r.path)]
        assert per_commit == [] and len(llm.requests) == calls  # not even the headline again


async def test_files_a_digest_found_missing_are_looked_for_again_once_it_is_done(fake_github, services_for):
    """A digest looks for its day's files once; what it found does not outlive it. Here the
    analyses are cached but the files are gone (files are kept 14 days, analyses 180: a range of
    older commits): the digest reads no file, and a question on a commit afterwards — its files
    stored meanwhile by another process — reads them from the cache, not from GitHub again."""
    shas = day_of_commits(fake_github)
    s = await services_for(github_api_url=fake_github.url, digest_cache_ttl=0)
    source = s.source(REPO)
    await s.builder.build(source, WINDOW, "en")  # analyses and files cached
    await s.store.delete(*(s.store.files_key(source.cache_id, sha) for sha in shas.values()))
    await s.builder.build(source, WINDOW, "en")  # analyses cached: no file read
    other = await services_for(github_api_url=fake_github.url, redis_prefix=s.settings.redis_prefix)
    await other.builder.files(other.source(REPO), shas["pipe"])  # another process reads them

    def fetched() -> int:
        return sum(1 for r in fake_github.requests if r.path.endswith(f"/commits/{shas['pipe']}"))

    before = fetched()
    files = await s.builder.files(source, shas["pipe"])
    assert [f.path for f in files] == ["docs/cpu.md"]
    assert fetched() == before


async def test_llm_outage_still_delivers_every_commit_marked(fake_github, services_for):
    shas = day_of_commits(fake_github)
    with FakeOpenAI(responder=lambda r: Reply(status=500)) as llm:
        s = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-1234567890",
            llm_max_retries=0,
        )
        digest = await s.builder.build(s.source(REPO), WINDOW, "en")
        assert [e.commit.sha for e in digest.entries] == [shas["marlin"], shas["pipe"], shas["midnight"]]
        assert {e.analysis.origin for e in digest.entries} == {"fallback"}
        md = render_report([digest])
        assert md.count("The LLM analysis failed; rule-based analysis instead: LLM unavailable") == 3
        assert "sk-test" not in md

        # The day's digest is kept as published: with the endpoint back, a reader still gets the
        # same one; the improve pass (run by the clock, off the readers' path) analyses it again in place.
        from bot.core.chat_platform import Platforms
        from bot.improve.runner import Improver

        asked = len(llm.requests)
        llm.responder = default_responder
        s2 = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-1234567890",
            redis_prefix=s.settings.redis_prefix,
        )
        digest2 = await s2.builder.build(s2.source(REPO), WINDOW, "en")
        assert replace(digest2, cost=None) == replace(digest, cost=None) and len(llm.requests) == asked
        assert (
            await Improver(s2.store, s2.settings, Platforms(), LATER, s2.sources, s2.builder, s2.corrections).run(
                digest.kept_as, LATER()
            )
            == "3 of 3 improved, headline improved"
        )
        digest3 = await s2.builder.build(s2.source(REPO), WINDOW, "en")
    assert {e.analysis.origin for e in digest3.entries} == {"llm"} and digest3.notices == ()
    assert {e.analysis.improved_from for e in digest3.entries} == {"http_error"}
    assert (
        render_report([digest3]).count(
            "✏️ Re-analysed by the LLM at 02-01 08:00 (it was the offline fallback: "
            "the LLM endpoint answered with errors)"
        )
        == 3
    )


async def test_one_commit_failing_never_loses_the_rest(fake_github, services_for):
    shas = day_of_commits(fake_github)
    fake_github.fail_next(500, 50, path_contains=f"/commits/{shas['pipe']}")
    s = await services_for(github_api_url=fake_github.url)
    digest = await s.builder.build(s.source(REPO), WINDOW, "en")
    assert len(digest.entries) == 3
    broken = next(e for e in digest.entries if e.commit.sha == shas["pipe"])
    assert broken.error.startswith("GitHub kept failing (HTTP 500)")
    md = render_report([digest])
    assert "GitHub kept failing (HTTP 500)" in md and md.count("#### ") == 3
    # kept as published, said at its top; the improve pass reads that commit again later
    assert digest.notices[0].startswith("⚠️ The changes of 1 of 3 commits could not be read")


async def test_offline_digest_on_a_local_repository(tmp_path, services_for):
    from tests.gitrepo import GitRepo

    r = GitRepo(tmp_path / "proj")
    r.commit(
        "feat: add exporter\n\nAdds CSV export.",
        {"src/export.py": "def export():\n    return 1\n"},
        when=datetime(2026, 1, 28, 10, tzinfo=SH),
    )
    r.commit("docs: typo", {"README.md": "hello\n"}, when=datetime(2026, 1, 28, 11, tzinfo=SH))
    s = await services_for()
    digest = await s.builder.build(s.source(str(r.path)), WINDOW, "en")
    assert [e.commit.title for e in digest.entries] == ["docs: typo", "feat: add exporter"]
    assert {e.analysis.origin for e in digest.entries} == {"offline"}
    md = render_report([digest])
    assert "Rule-based analysis (no LLM configured)" in md and "(rule-based)" in md
    assert_links_resolve(md)
    data = json.loads(render_json([digest]))
    d = data["digests"][0]
    assert data["schema"] == "digest-bot/digest@1"
    assert d["stats"]["total"] == 2 and d["entries"][0]["importance"] == "low"
    assert d["entries"][1]["analysis"]["change_type"] == "feature"
    assert d["entries"][1]["coverage_line"] == "The changed file was analysed"


async def test_empty_day_and_range(tmp_path, services_for):
    from bot.core.window import parse_window
    from tests.gitrepo import GitRepo

    r = GitRepo(tmp_path / "p")
    r.commit("a", {"a": "1\n"}, when=datetime(2026, 1, 20, 10, tzinfo=SH))
    r.commit("b", {"b": "1\n"}, when=datetime(2026, 1, 22, 23, 59, tzinfo=SH))
    s = await services_for()
    empty = await s.builder.build(s.source(str(r.path)), WINDOW, "zh")
    assert empty.entries == () and "没有新的提交" in render_report([empty])
    window = parse_window("2026-01-20..2026-01-22", "Asia/Shanghai", LATER())
    ranged = await s.builder.build(s.source(str(r.path)), window, "zh")
    md = render_report([ranged])
    assert [e.commit.title for e in ranged.entries] == ["b", "a"]
    assert md.startswith("# 更新报告（2026-01-20..2026-01-22）") and "共 2 个提交" in md


def test_slugger_matches_the_independent_check():
    from bot.render.markdown import Slugger

    s = Slugger()
    for text in ("🔴 高重要度变更 (4)", "[Quantization][Deprecation] Remove Marlin 24 (#32688)", "a  b", "a b"):
        assert s.slug(text) in ("-高重要度变更-4", "quantizationdeprecation-remove-marlin-24-32688", "a-b", "a-b-1")
    assert _github_slug("🔴 高重要度变更 (4)") == "-高重要度变更-4"


def test_markdown_escapes_layout_breakers():
    from bot.render.markdown import esc, esc_rich

    assert esc("a | b <!channel> [x](y) #1") == "a \\| b &lt;\\!channel&gt; \\[x\\](y) \\#1"
    rich = esc_rich("# heading\n```\ncode\n---\n> quote\n    indented")
    assert rich.splitlines() == ["\\# heading  ", "\\```  ", "code  ", "\\---  ", "&gt; quote  ", "indented"]


# --- GitHub requests per day: one per commit plus a few -------------------------------------------


def _busy_day(fake, n: int = 27) -> None:
    fake.add_repo(REPO)
    fake.add_commit(REPO, "init", committed_at=datetime(2026, 1, 27, 12, tzinfo=SH), files=[FakeFile("README.md")])
    for i in range(n):
        fake.add_commit(
            REPO,
            f"[Core] Tidy module {i} (#{40000 + i})",
            committed_at=datetime(2026, 1, 28, 1 + i % 20, i, tzinfo=SH),
            files=[FakeFile(f"vllm/mod_{i}.py", "modified", 3, 1)],
        )
        fake.add_pull(REPO, 40000 + i, body=f"## Purpose\nTidy module {i} so callers stop copying buffers.")


def _profile_read(r) -> bool:
    """A request of the learned profile: history and tip look-ups (commit listings without `since`),
    the notes' files and folders, releases, and PR labels."""
    return (
        (r.path.endswith("/commits") and "since" not in r.query)
        or ("/contents" in r.path and not r.path.endswith((".digest.toml", "CODEOWNERS")))
        or "/git/trees/" in r.path
        or r.path.endswith("/releases")
        or (r.path == "/graphql" and "pullRequest(" in (r.body or ""))
    )


@pytest.mark.parametrize("graphql", [True, False])
async def test_a_day_costs_one_github_request_per_commit_plus_a_few(fake_github, services_for, graphql):
    """PR descriptions come in one GraphQL request per 50 commits; where GraphQL is unavailable
    (an Enterprise server without it) they still arrive, one REST request each."""
    _busy_day(fake_github)
    fake_github.graphql = graphql
    with FakeOpenAI() as llm:
        s = await services_for(
            github_api_url=fake_github.url,
            github_token="ghp_" + "x" * 36,
            openai_base_url=llm.url,
            openai_api_key="sk-test-1234567890",
        )
        digest = await s.builder.build(s.source(REPO), WINDOW, "en")
        prompts = [json.dumps(r["messages"]) for r in llm.requests]
    assert len(digest.entries) == 27
    for i in range(27):  # every PR's description reached its commit's prompt
        assert sum(f"Tidy module {i} so callers stop copying buffers" in p for p in prompts) == 1
    # The learned profiles' reads (bot/taste) are counted apart: a few a repository and day, not a
    # commit. The Shanghai day spans two UTC days, so two profiles: the first finds no history
    # before it (one request), the second reads the root listing, one page of history and releases.
    profile = [r for r in fake_github.requests if _profile_read(r)]
    # CODEOWNERS is looked for once a digest, as of its newest commit, in GitHub's three places
    owners = [r for r in fake_github.requests if r.path.endswith("CODEOWNERS")]
    assert len(owners) == 3 and {r.query.get("ref") for r in owners} == {digest.entries[0].commit.sha}
    requests = len(fake_github.requests) - len(profile) - len(owners)
    assert len(profile) <= 8
    if graphql:
        assert requests <= 27 + 4  # files per commit + repository, listing, one GraphQL query
        assert sum(r.path == "/graphql" and "pullRequest(" not in r.body for r in fake_github.requests) == 1
    else:
        assert requests >= 27 * 2  # the REST path, one PR look-up per commit
