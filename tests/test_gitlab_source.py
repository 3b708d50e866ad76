"""GitLab as a commit source: the real python-gitlab against a fake GitLab REST API on 127.0.0.1
(tests/fakes/gitlab_server.py) through GITLAB_URL. What a reader sees: the digest's merge-request
context and GitLab's links on every surface; one sentence for what GitLab refuses."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from pydantic import SecretStr

from bot.core.chat_platform import CommitDetail, DigestParent
from bot.core.models import NotFoundError, RateLimited, SourceError, UsageError
from bot.core.window import day_window
from bot.i18n import localize
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from bot.report.page import render_page
from bot.sources.opened import open_source
from tests.fakes.gitlab_server import FakeDiff, FakeGitLab

SH = ZoneInfo("Asia/Shanghai")
PROJECT = "acme/platform/api"
DAY = date(2026, 1, 28)
WINDOW = day_window(DAY, "Asia/Shanghai")
LATER = lambda: datetime(2026, 2, 1, tzinfo=UTC)  # noqa: E731 — the window is finished


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 1, 28, hour, minute, tzinfo=SH)


@pytest.fixture
def gl_settings(fake_gitlab, make_settings):
    return lambda **o: make_settings(**{"gitlab_url": fake_gitlab.url, "gitlab_max_rate_limit_wait": 10.0, **o})


def a_day(gl: FakeGitLab) -> dict[str, str]:
    gl.add_project(PROJECT)
    gl.add_commit(PROJECT, "init", committed_at=datetime(2026, 1, 27, 9, tzinfo=SH), contents={"README.md": "hi"})
    shas = {
        "knob": gl.add_commit(
            PROJECT,
            "Add a retry knob to the payment client",
            committed_at=at(10),
            diffs=[FakeDiff("payments/client.py", lines=12), FakeDiff("assets/huge.sql", too_large=True)],
        ),
        "docs": gl.add_commit(PROJECT, "Fix a typo in the docs", committed_at=at(15), diffs=[FakeDiff("docs/a.md")]),
    }
    gl.add_merge_request(
        PROJECT,
        42,
        title="Add a retry knob",
        description="Retries payments on timeouts.\n\nCloses #7",
        labels=["security", "payments"],
        squash_commit_sha=shas["knob"],
        merged_at=at(10, 1),
        closes=[(7, "Payments time out under load")],
    )
    return shas


async def test_a_gitlab_day_through_the_registry_with_its_merge_requests(fake_gitlab, gl_settings):
    shas = a_day(fake_gitlab)
    source = open_source(f"gitlab:{PROJECT}", gl_settings())
    commits = await source.list_commits(WINDOW)
    assert [c.sha for c in commits] == [shas["docs"], shas["knob"]]
    knob = commits[1]
    assert knob.pr_number == 42 and knob.url == f"{fake_gitlab.url}/{PROJECT}/-/commit/{shas['knob']}"
    await source.prefetch_prs(commits)
    text = await source.pr_description(42)
    assert text is not None and "Labels: security, payments" in text and "#7 Payments time out under load" in text
    assert "Retries payments on timeouts." in text
    files = await source.get_files(shas["knob"])
    assert [(f.path, f.additions, f.patch is None) for f in files] == [
        ("payments/client.py", 12, False),
        ("assets/huge.sql", 0, True),  # GitLab cut it (too_large): no patch, said in the coverage line
    ]


async def test_a_gitlab_url_names_the_project_and_a_day_costs_few_requests(fake_gitlab, gl_settings):
    shas = a_day(fake_gitlab)
    source = open_source(f"{fake_gitlab.url}/{PROJECT}/-/merge_requests/42", gl_settings())
    assert source.name == PROJECT and source.spec.endswith("/-/merge_requests/42")
    commits = await source.list_commits(WINDOW)
    await source.prefetch_prs(commits)
    for c in commits:
        await source.get_files(c.sha)
    # the project, one commits page, one merged-MRs page, one closes_issues (its MR closes #7), two diffs
    assert len(fake_gitlab.requests) == 6
    assert fake_gitlab.count(startswith=f"/api/v4/projects/{PROJECT.replace('/', '%2F')}/repository/commits/") == 2
    assert shas


async def test_gitlab_digest_links_the_gitlab_way_on_every_surface(fake_gitlab, gl_settings, make_services):
    shas = a_day(fake_gitlab)
    services = await make_services(LATER, gitlab_url=fake_gitlab.url)
    digest = await services.builder.build(services.source(f"gitlab:{PROJECT}"), WINDOW, "en")
    web = f"{fake_gitlab.url}/{PROJECT}"
    mr, commit = f"{web}/-/merge_requests/42", f"{web}/-/commit/{shas['knob']}"
    knob = next(e for e in digest.entries if e.commit.sha == shas["knob"])

    markdown = render_report([digest])
    assert f"MR [!42]({mr})" in markdown and commit in markdown and "/pull/" not in markdown

    data = json.loads(render_json([digest]))["digests"][0]
    entry = next(e for e in data["entries"] if e["commit"]["sha"] == shas["knob"])
    assert entry["pr_url"] == mr and entry["commit"]["url"] == commit
    assert "assets/huge.sql" in (entry["coverage_line"] or "")

    slack = json.dumps(S.render(CommitDetail(digest, knob)) + S.render(DigestParent(digest)), ensure_ascii=False)
    assert f"<{mr}|!42>" in slack and "/pull/" not in slack

    feishu = json.dumps(F.render_cards(CommitDetail(digest, knob)), ensure_ascii=False)
    assert f"[MR !42]({mr})" in feishu and "/pull/" not in feishu

    page = render_page(digest)
    assert f'<a href="{mr}">!42</a>' in page and "/pull/" not in page


async def test_what_gitlab_refuses_is_one_sentence(fake_gitlab, gl_settings):
    a_day(fake_gitlab)
    fake_gitlab.accept_tokens("glpat-good")
    unknown = open_source("gitlab:acme/nothing-here", gl_settings())
    with pytest.raises(NotFoundError) as missing:
        await unknown.list_commits(WINDOW)
    assert "acme/nothing-here" in localize(missing.value, "en") and "GitLab" in localize(missing.value, "en")
    bad = open_source(f"gitlab:{PROJECT}", gl_settings(gitlab_token=SecretStr("glpat-wrong")))
    with pytest.raises(SourceError) as refused:
        await bad.list_commits(WINDOW)
    said = localize(refused.value, "zh")
    assert "GITLAB_TOKEN" in said and "glpat-wrong" not in said


async def test_a_429_is_waited_out_through_the_shared_gate_and_a_far_reset_fails_at_once(fake_gitlab, gl_settings):
    shas = a_day(fake_gitlab)
    source = open_source(f"gitlab:{PROJECT}", gl_settings())
    fake_gitlab.rate_limit_next(retry_after=1)
    commits = await source.list_commits(WINDOW)
    assert {c.sha for c in commits} == set(shas.values())
    far = open_source(f"gitlab:{PROJECT}", gl_settings(gitlab_max_rate_limit_wait=5.0))
    fake_gitlab.rate_limit_next(retry_after=3600)
    with pytest.raises(RateLimited) as limited:
        await far.list_commits(WINDOW)
    assert "GitLab" in localize(limited.value, "en")


async def test_release_ranges_use_gitlab_tags_and_compare(fake_gitlab, gl_settings):
    from bot.sources.refrange import release_window

    shas = a_day(fake_gitlab)
    project = fake_gitlab._projects[PROJECT]
    first = next(s for s, c in project.commits.items() if c.message == "init")
    fake_gitlab.add_tag(PROJECT, "v1.0.0", first)
    fake_gitlab.add_tag(PROJECT, "v1.1.0", shas["docs"])
    source = open_source(f"gitlab:{PROJECT}", gl_settings())
    window = await release_window(source, None, "Asia/Shanghai")
    assert window.label == "v1.0.0..v1.1.0"
    assert [c.sha for c in await source.list_commits(window)] == [shas["docs"], shas["knob"]]
    assert await source.pushed_since(first, shas["docs"]) is not None


async def test_the_learned_profile_reads_gitlab_changelogs_and_releases(fake_gitlab, gl_settings):
    a_day(fake_gitlab)
    fake_gitlab.add_commit(
        PROJECT,
        "Changelog",
        committed_at=at(16),
        contents={"CHANGELOG.md": "## v1.1.0\n\n- Add a retry knob (!42)\n", "docs/notes/old.md": "x"},
    )
    fake_gitlab.add_release(PROJECT, "v1.0.0", "- First release", datetime(2026, 1, 1, tzinfo=UTC))
    source = open_source(f"gitlab:{PROJECT}", gl_settings())
    tip = await source.tip_before(datetime(2026, 1, 29, tzinfo=UTC))
    assert tip is not None
    paths = await source.list_paths(tip)
    assert "CHANGELOG.md" in paths and "docs/notes/old.md" in paths
    assert "retry knob" in (await source.read_file("CHANGELOG.md", tip) or "")
    assert await source.read_file("NOPE.md", tip) is None
    assert (await source.release_bodies(datetime(2026, 2, 1, tzinfo=UTC)))[0].startswith("## v1.0.0")
    assert await source.pr_labels([42, 99]) == {42: ["security", "payments"]}


def test_a_name_matching_nothing_gets_one_sentence_listing_the_forms(make_settings):
    with pytest.raises(UsageError) as err:
        open_source("not a repo at all", make_settings())
    en, zh = localize(err.value, "en"), localize(err.value, "zh")
    assert "owner/name" in en and "gitlab:group/project" in en and "\n" not in en
    assert "本地路径" in zh and "gitlab:group/project" in zh


def test_gitlab_names_and_urls_parse_to_one_spec(make_settings):
    from bot.sources.registry import find

    settings = make_settings(gitlab_url="https://git.corp.example/gitlab")
    for typed in (
        "gitlab:grp/sub/proj",
        "https://git.corp.example/gitlab/grp/sub/proj",
        "https://git.corp.example/gitlab/grp/sub/proj.git",
        "https://git.corp.example/gitlab/grp/sub/proj/-/commit/abc",
    ):
        named = find(typed, settings)
        assert named is not None and (named.kind, named.spec) == ("gitlab", "gitlab:grp/sub/proj"), typed
    other = find("https://gitlab.com/grp/proj", settings)  # another server: not this GitLab's API
    assert other is not None and other.kind == "url"  # any git URL: through a mirror
    assert find("octo/widgets", settings).kind == "github"  # type: ignore[union-attr]


# --- adding a host: one module (here, the class below) plus its registry entry -------------------


class TinySource:
    """A test-only host: `tiny:NAME`, linking the way its (imaginary) host does."""

    def __init__(self, where: str, settings) -> None:
        from bot.core.links import LinkStyle

        self.spec, self.name, self.cache_id = f"tiny:{where}", where, f"tiny:{where}"
        self.web_url = f"https://tiny.example/{where}"
        self.links = LinkStyle(commit="{repo_url}/c/{sha}", change="{repo_url}/r/{number}", change_mark="~")


def test_a_host_is_one_module_plus_its_registry_entry(make_settings):
    from bot.core.models import Digest
    from bot.sources.registry import SourceEntry, find, registered

    settings = make_settings()
    entry = SourceEntry(
        "tiny", "sources.form_github", lambda n, s: n[5:] if n.startswith("tiny:") else None, TinySource
    )
    with pytest.raises(UsageError):
        open_source("tiny:widgets", settings)  # before its entry: no host takes the name
    with registered(entry, before="github"):
        source = open_source("tiny:widgets", settings)
        assert isinstance(source, TinySource) and find("tiny:widgets", settings).entry.remote  # type: ignore[union-attr]
        digest = Digest("widgets", "main", WINDOW, "en", (), repo_url=source.web_url, links=source.links)
        assert digest.change_url(5) == "https://tiny.example/widgets/r/5"
        assert digest.commit_url("abc") == "https://tiny.example/widgets/c/abc"
    with pytest.raises(UsageError):
        open_source("tiny:widgets", settings)


# --- GitLab's push webhook --------------------------------------------------------------------------


async def test_gitlab_push_webhook_checks_its_token_and_wakes_the_project():
    import aiohttp

    from handlers.web import bound_port, build_app, gitlab_webhook_routes, start_server

    woken: list[tuple[str, str]] = []

    async def wake(path: str, host: str) -> int:
        woken.append((path, host))
        return 1

    class NoStore:  # build_app reads the store only for /healthz
        pass

    runner = await start_server(build_app(NoStore(), gitlab_webhook_routes("s3cret", wake)), "127.0.0.1", 0)  # type: ignore[arg-type]
    url = f"http://127.0.0.1:{bound_port(runner)}/gitlab/webhook"
    push = {"object_kind": "push", "ref": "refs/heads/main", "project": {"path_with_namespace": PROJECT}}
    try:
        async with aiohttp.ClientSession() as http:

            async def send(token: str | None, event: str = "Push Hook", body: dict = push) -> int:
                headers = {"X-Gitlab-Event": event, "Content-Type": "application/json"}
                if token is not None:
                    headers["X-Gitlab-Token"] = token
                async with http.post(url, data=json.dumps(body), headers=headers) as resp:
                    return resp.status

            assert await send(None) == 401
            assert await send("wrong") == 403
            assert woken == []
            assert await send("s3cret", event="Merge Request Hook") == 204
            assert await send("s3cret") == 202
            assert woken == [(PROJECT, "gitlab")]
    finally:
        await runner.cleanup()
