"""One commit, one level, everywhere: the same commit carries the same level, change type and
reason in the daily digest, a range of days, the weekly roll-up, the upgrade report of a release
range (`/digest A..B`, `release TAG`), the report page, the CLI's Markdown and JSON — in the
terminal, Slack and Feishu — whether the repository is read from GitHub (the fake GitHub, through
the real PyGithub) or from a local clone of it.

The offline analyser's rules change over time, so nothing here says which level a commit gets:
every surface is compared with the others. Each surface is drawn from a cold cache (a key prefix
of its own, so each analyses and learns its profile afresh): an input that depended on the window,
the day it was asked or the source would show as a difference. The repository (tests/levels_repo.py)
is judged by a learned profile of its release notes as well as by the rules.
"""

from __future__ import annotations

import html
import io
import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from bot.core.models import ChangeType
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from handlers.web import bound_port, build_app, report_routes, start_server
from tests import levels_repo
from tests.fakes.github_server import FakeGitHub
from tests.gitrepo import GitRepo
from tests.shared.feishu import GROUP, feishu_env
from tests.shared.mirror import mirror
from tests.shared.report_page import PUBLIC, local
from tests.shared.slack import CHANNEL, shown

REPO = "octo/resolver"
TOKEN = "ghp_" + "x" * 36
D1, D2, D3 = levels_repo.DAYS
NOW = datetime(2026, 4, 10, 1, tzinfo=UTC)  # the chats' clock: every day under test is over
LEVELS = {"🔴": "high", "🟡": "medium", "🟢": "low"}
FACTS = re.compile(
    r"(?:Change type|变更类型)\s*[:：]\s*(?P<type>[^·]+?)\s*·\s*(?:⚡\s*)?(?:Importance|重要程度)\s*[:：]\s*"
    r"(?P<level>🔴|🟡|🟢)\s*\S+(?:\s+—\s+(?P<reason>.+))?$"
)
SHA = re.compile(r"(?<![0-9a-f])[0-9a-f]{7}(?![0-9a-f])")
ON_A_LINE = re.compile(r"(🔴|🟡|🟢)(.*)")


@dataclass(frozen=True)
class Said:
    """What a surface says of one commit: its level, and where it shows them its type and reason."""

    level: str
    kind: str = ""  # the change type's label, in the surface's language
    reason: str = ""  # as read, markup and escapes taken away


def plain(text: str) -> str:
    """A sentence as a reader reads it, whatever the surface's markup and escaping."""
    text = html.unescape(text).replace("\u200b", "")
    text = re.sub(r"[`*_\\]", "", text)
    return " ".join(text.split()).rstrip("。.")


# --- the project, on both sources ----------------------------------------------------------------


@dataclass
class Project:
    repo: GitRepo  # the clone
    fake: FakeGitHub  # the same repository on (the fake) GitHub
    shas: dict[str, str]  # short sha → full sha, every commit of the days under test and before

    @property
    def path(self) -> Path:
        return self.repo.path


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    repo = levels_repo.build(tmp_path_factory.mktemp("levels") / "resolver")
    with FakeGitHub() as fake:
        mirror(repo, fake, REPO)
        fake.accept_tokens(TOKEN)
        shas = {sha[:7]: sha for sha in repo.git("rev-list", "main").split()}
        yield Project(repo, fake, shas)


def spec(project: Project, source: str) -> str:
    return REPO if source == "github" else str(project.path)


def fresh(project: Project, source: str, lang: str = "en") -> dict:
    """Settings for a bot of its own on a key prefix of its own: nothing cached, nothing learned."""
    return {
        "redis_prefix": f"lv{uuid.uuid4().hex[:8]}:",
        "default_repo": spec(project, source),
        "default_lang": lang,
        "default_tz": "UTC",
        "github_api_url": project.fake.url,
        "github_token": TOKEN,
    }


def cold(make_settings, project: Project, source: str, lang: str = "en", **more):
    return make_settings(**fresh(project, source, lang), **more)


def on_day(project: Project, day: str) -> set[str]:
    """The commits of a day (UTC), as short SHAs."""
    out = project.repo.git("log", "--format=%H", f"--since={day}T00:00:00Z", f"--until={day}T23:59:59Z")
    return {sha[:7] for sha in out.split()}


# --- reading each surface ------------------------------------------------------------------------


def levels_on_lines(text: str, known) -> dict[str, str]:
    """A level emoji, then on the same line the first commit it names: the level that line shows."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        for match in ON_A_LINE.finditer(line):
            named = [s for s in SHA.findall(match.group(2)) if s in known]
            if named:
                found.setdefault(named[0], LEVELS[match.group(1)])
    return found


def facts_of(chunk: str, known) -> tuple[str, Said] | None:
    """A commit's own message (or section): the first commit it names, and its facts line."""
    named = [s for s in SHA.findall(chunk) if s in known]
    for line in chunk.splitlines():
        if match := FACTS.search(plain(line)):
            assert named, chunk
            return named[0], Said(LEVELS[match["level"]], match["type"].strip(), match["reason"] or "")
    return None


def read(chunks, known) -> dict[str, Said]:
    """What a surface says of each commit: the facts of its own message or section where it has
    one, else the level of the lines listing it; a commit said two different things fails."""
    said: dict[str, Said] = {}
    for chunk in chunks:
        if found := facts_of(chunk, known):
            sha, facts = found
            assert said.get(sha, facts) == facts, (sha, said[sha], facts)
            said[sha] = facts
    for chunk in chunks:
        for sha, level in levels_on_lines(chunk, known).items():
            assert said.setdefault(sha, Said(level)).level == level, (sha, said[sha], level, chunk)
    return said


def console_chunks(out: str) -> list[str]:
    """The terminal's messages: each `[#N]` and `↳ [#N in #M]` with its indented lines."""
    return re.split(r"\n(?=\[#\d+\]|\s+↳ \[#\d+ in #\d+\])", out)


def markdown_chunks(text: str) -> list[str]:
    return text.split("\n#### ")


def page_chunks(page: str) -> list[str]:
    """The report page's commits: each <article>'s SHA and its facts paragraph, as read."""
    chunks = []
    for article in page.split("<article")[1:]:
        sha = re.search(r"<code>([0-9a-f]{7})</code>", article)
        facts = re.search(r'<p class="facts">(.*?)</p>', article, re.S)
        if sha and facts:
            chunks.append(sha.group(1) + "\n" + re.sub(r"<[^>]+>", "", facts.group(1)))
    return chunks


# --- the truth it is all compared with: the CLI's JSON ---------------------------------------------


def cli(run, project: Project, source: str, *args: str, lang: str = "en") -> str:
    env = {
        "REDIS_PREFIX": f"cli{uuid.uuid4().hex[:8]}:",
        "GITHUB_API_URL": project.fake.url,
        "GITHUB_TOKEN": TOKEN,
        "DEFAULT_TZ": "UTC",
    }
    done = run("digest", "--repo", spec(project, source), "--lang", lang, *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def from_json(out: str, lang: str) -> dict[str, Said]:
    said = {}
    for d in json.loads(out)["digests"]:
        for e in d["entries"]:
            a = e["analysis"]
            kind = ChangeType(a["change_type"]).label(lang)
            said[e["commit"]["sha"][:7]] = Said(e["importance"], kind, a["importance_reason"])
    return said


def same(truth: dict[str, Said], seen: dict[str, Said], where: str) -> None:
    """Every commit `seen` shows as `truth` says it: the level, and the type and reason where shown."""
    assert seen, where
    for sha, said in seen.items():
        want = truth[sha]
        assert said.level == want.level, (where, sha, said, want)
        if said.kind:
            assert (said.kind, plain(said.reason)) == (want.kind, plain(want.reason)), (where, sha, said, want)


# --- the chats -------------------------------------------------------------------------------------


async def terminal(settings, lines: list[str]) -> str:
    """What the terminal chat shows after `lines`, typed into a bot of its own."""
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    try:
        for line in lines:
            await ConsoleChat(chat.router, platform).handle(line)
            await chat.drain()
        return out.getvalue()
    finally:
        await services.aclose()


async def report_page(settings, line: str) -> str:
    """The report page a terminal digest links, as the web app serves it."""
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    try:
        await ConsoleChat(chat.router, platform).handle(line)
        await chat.drain()
        (link,) = re.findall(r"https://digest\.example\.com/r/\S+", out.getvalue())
        async with (
            aiohttp.ClientSession() as http,
            http.get(local(link, f"http://127.0.0.1:{bound_port(runner)}")) as r,
        ):
            assert r.status == 200
            return await r.text()
    finally:
        await runner.cleanup()
        await services.aclose()


async def test_every_surface_and_both_sources_say_the_same_of_each_commit(make_settings, run, make_bot, slack, project):
    known = project.shas
    truth = from_json(cli(run, project, "local", "--date", f"{D1}..{D3}", "--format", "json"), "en")
    days = set(truth)
    assert len(days) == 11 and len({s.level for s in truth.values()}) > 1  # a range of days, read whole

    # JSON and Markdown from the CLI: the other source, a day, the release range, the release
    github_day = from_json(cli(run, project, "github", "--date", D2, "--format", "json"), "en")
    assert github_day == {s: truth[s] for s in github_day} and len(github_day) == 4
    upgrade = from_json(
        cli(run, project, "github", "--range", f"{levels_repo.FIRST_TAG}..main", "--format", "json"), "en"
    )
    assert upgrade == truth  # the release range is the three days' first-parent commits
    release_md = cli(run, project, "local", "--release", levels_repo.LAST_TAG, "--format", "markdown")
    same(truth, read(markdown_chunks(release_md), known), "Markdown, release, clone")
    day_md = cli(run, project, "github", "--date", D3, "--format", "markdown")
    seen = read(markdown_chunks(day_md), known)
    same(truth, seen, "Markdown, day, GitHub")
    assert len(seen) == 3 and all(s.kind for s in seen.values())

    # the terminal: a day, the week's roll-up, a release range (clone); the release, a day (GitHub)
    for source, line in (
        ("local", f"/digest {D1}"),
        ("local", f"/digest week {D2}"),
        ("local", f"/digest {levels_repo.FIRST_TAG}..{levels_repo.LAST_TAG}"),
        ("github", f"release {levels_repo.LAST_TAG}"),
        ("github", f"/digest {D3}"),
    ):
        out = await terminal(cold(make_settings, project, source), [line])
        seen = read(console_chunks(out), known)
        same(truth, seen, f"terminal, {line}, {source}")
        if "week" in line:  # the roll-up lists the commits above low, and only those
            assert {s for s in seen} == {s for s in days if truth[s].level != "low"}
    # One session, one cache, a repository whose profiles are not learnt yet: each day is judged
    # by what was learnt when it was first asked for (here the rules, while the profiles are
    # learnt in the background), and that judgement stays: the range after the two days says of
    # each commit what the days said (`read` fails on a commit said two ways).
    out = await terminal(
        cold(make_settings, project, "local"), [f"/digest {D3}", f"/digest {D1}", f"/digest {D1}..{D3}"]
    )
    seen = read(console_chunks(out), known)
    assert set(seen) == days
    page = await report_page(cold(make_settings, project, "github", public_base_url=PUBLIC), f"/digest {D2}")
    seen = read(page_chunks(page), known)
    same(truth, seen, "report page, GitHub")
    assert len(seen) == 4 and all(s.kind for s in seen.values())

    # Slack: a range of days from GitHub, every message of its thread
    bot = await make_bot(**fresh(project, "github"))
    await bot.sender.slash(f"{D1}..{D3}")
    await bot.settle()
    (parent,) = slack.top_level(CHANNEL)
    messages = [parent, *slack.replies(CHANNEL, parent.ts)]
    seen = read([shown(m) for m in messages], known)
    same(truth, seen, "Slack, range, GitHub")
    assert set(seen) == days


async def test_in_chinese_too_feishu_and_the_terminal_say_what_the_json_says(make_settings, run, project):
    known = project.shas
    truth = from_json(cli(run, project, "local", "--date", f"{D1}..{D3}", "--format", "json", lang="zh"), "zh")

    out = await terminal(cold(make_settings, project, "github", "zh"), [f"/digest {D3}"])
    same(truth, read(console_chunks(out), known), "terminal, day, GitHub, zh")

    for line in (f"digest {D2}", f"week {D2}"):
        async with feishu_env(make_settings, project, **fresh(project, "local", "zh")) as env:
            await env.say(line)
            await env.settle()
            (parent,) = env.fake.top_level(GROUP)
            cards = [parent, *env.fake.thread(parent.message_id)]
            chunks = [env.fake.card(c)["header"]["title"]["content"] + "\n" + env.fake.markdown_of(c) for c in cards]
            seen = read(chunks, known)
            same(truth, seen, f"Feishu, {line}, clone, zh")
            above_low = {s for s in truth if truth[s].level != "low"}
            if line.startswith("week"):  # the roll-up lists the commits above low, and only those
                assert set(seen) == above_low
            else:  # the day: every commit, its own card for those above low
                assert set(seen) == on_day(project, D2)
                assert {s for s, said in seen.items() if said.kind} == above_low & on_day(project, D2)


async def test_a_commit_its_files_and_the_history_read_the_same_from_github_and_the_clone(make_services, project):
    """What the analyses and the learned profile read, from both sources: a commit (its totals: a
    rename is one file), its files (an empty file and a change of mode are text without a hunk, a
    binary file has no patch) and the history's paths (a squash merge's are its PR's)."""
    services = await make_services(github_api_url=project.fake.url, github_token=TOKEN)
    clone, github = services.source(str(project.path)), services.source(REPO)
    for day in (D1, D2, D3):
        for short in sorted(on_day(project, day)):
            sha = project.shas[short]
            assert await github.get_commit(sha) == await clone.get_commit(sha), short
            assert await github.get_files(sha) == await clone.get_files(sha), short
    head = project.shas[sorted(on_day(project, D3))[0]]
    assert await github.history(head, 500) == await clone.history(head, 500)
