"""Any git URL through a mirror the bot keeps (issue 36 §3): a local git server over HTTP (git's own
`git http-backend` behind a loopback server, tests/fakes/git_http.py) stands for a Gitea, Gitee or
company server. What a reader sees: the digest with the host's links on every surface, one
sentence when a fetch is stopped at its time or size bound, today's digest with a push of a minute
ago, one fetch for many readers, and a token typed into a URL nowhere a user or a log sees."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.core.chat_platform import CommitDetail, DigestParent
from bot.core.models import BotError, UsageError
from bot.core.window import day_window
from bot.i18n import localize
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from bot.sources.giturl import parse_git_url, without_credentials
from bot.sources.opened import open_source
from bot.sources.registry import find
from tests.fakes.git_http import GitHttpServer
from tests.gitrepo import GitRepo
from tests.shared.slack import CHANNEL, shown

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 28)
WINDOW = day_window(DAY, "Asia/Shanghai")
TOKEN = "glpat-SeCrEt-7f3a9c"  # typed into URLs below: must never be seen again
REPO = "org/widgets"


def at(hour: int) -> datetime:
    return datetime(2026, 1, 28, hour, 0, tzinfo=SH)


@pytest.fixture
def upstream(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "up")
    r.commit("init", {"src/app.py": "print('hi')\n"}, when=datetime(2026, 1, 27, 9, tzinfo=SH))
    r.commit("feat: add a retry knob (#42)", {"src/retry.py": "RETRIES = 3\n"}, when=at(10))
    r.commit("docs: explain the knob", {"README.md": "knob\n"}, when=at(15))
    return r


@pytest.fixture
def server(tmp_path, upstream):
    with GitHttpServer(tmp_path / "srv") as srv:
        srv.add_repo(REPO, upstream.path)
        yield srv


@pytest.fixture
def cli(redis_url, tmp_path):
    prefix = f"mir{os.getpid()}{id(tmp_path) % 10000}:"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "MIRROR_", "GIT"))
    }
    env.update(
        {"REDIS_URL": redis_url, "REDIS_PREFIX": prefix, "DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    )

    def start(*args: str, extra: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, **(extra or {})},
            cwd=tmp_path,
        )

    def run(*args: str, extra: dict | None = None) -> subprocess.CompletedProcess:
        proc = start(*args, extra=extra)
        out, err = proc.communicate(timeout=120)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    run.start = start  # type: ignore[attr-defined]
    run.prefix = prefix  # type: ignore[attr-defined]
    return run


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    return lines[0]


def packs_left(data: Path) -> list[str]:
    return [str(p) for p in data.rglob("tmp_*")] + [str(p) for p in data.rglob("incoming-*")]


# --- naming: which names are git URLs, and what is kept of them -------------------------------------


@pytest.mark.parametrize(
    "typed,url,name",
    [
        ("https://gitee.com/org/widgets.git", "https://gitee.com/org/widgets.git", "org/widgets"),
        (f"https://bob:{TOKEN}@git.corp.example/a/b/c", "https://git.corp.example/a/b/c", "a/b/c"),
        (f"http://oauth2:{TOKEN}@127.0.0.1:3000/org/w.git", "http://127.0.0.1:3000/org/w.git", "org/w"),
        (f"ssh://git:{TOKEN}@git.corp.example:2222/org/w.git", "ssh://git@git.corp.example:2222/org/w.git", "org/w"),
        ("git@codeberg.org:org/widgets.git", "git@codeberg.org:org/widgets.git", "org/widgets"),
        (f"git:{TOKEN}@codeberg.org:org/widgets.git", "git@codeberg.org:org/widgets.git", "org/widgets"),
        ("git://git.kernel.org/pub/scm/git/git.git", "git://git.kernel.org/pub/scm/git/git.git", "pub/scm/git/git"),
    ],
)
def test_a_git_url_is_named_without_its_credentials(make_settings, typed, url, name):
    named = find(typed, make_settings())
    assert named is not None and named.kind == "url" and named.spec == url
    assert TOKEN not in named.spec and parse_git_url(typed).name == name  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "typed",
    ["ext::sh -c touch% /tmp/x", "ext::sh", "file:///etc/passwd", "https://host.example/", "gitlab:grp/proj"],
)
def test_what_is_not_a_fetchable_url_is_not_taken_by_the_mirror(make_settings, typed):
    named = find(typed, make_settings())
    assert named is None or named.kind != "url"


def test_a_name_matching_nothing_is_echoed_without_its_credentials(make_settings):
    with pytest.raises(UsageError) as err:
        open_source(f"https://bob:{TOKEN}@host.example/", make_settings())
    said = localize(err.value, "en")
    assert TOKEN not in said and "https://host.example/" in said and "a git URL" in said
    assert without_credentials(f"see https://u:{TOKEN}@h/x") == "see https://h/x"
    assert without_credentials(f"u:{TOKEN}@h:x") == "u@h:x"


# --- a Gitea-style URL: a digest through the mirror, the host's links everywhere --------------------


async def test_a_gitea_url_digest_through_its_mirror_links_the_gitea_way_on_every_surface(
    server, upstream, make_services
):
    services = await make_services(lambda: datetime(2026, 2, 1, tzinfo=UTC), git_link_templates={"127.0.0.1": "gitea"})
    url = server.url_of(REPO)
    source = services.source(url)
    digest = await services.builder.build(source, WINDOW, "en")
    web = f"{server.url}/{REPO}"
    knob_sha = upstream.git("rev-parse", "HEAD~1").strip()
    knob = next(e for e in digest.entries if e.commit.sha == knob_sha)
    pull, commit = f"{web}/pulls/42", f"{web}/commit/{knob_sha}"
    assert [e.commit.title for e in digest.entries] == ["docs: explain the knob", "feat: add a retry knob (#42)"]
    assert (source.spec, source.name, digest.repo_url) == (url, REPO, web)

    markdown = render_report([digest])
    assert f"PR [#42]({pull})" in markdown and commit in markdown and "/pull/42" not in markdown

    data = json.loads(render_json([digest]))["digests"][0]
    entry = next(e for e in data["entries"] if e["commit"]["sha"] == knob_sha)
    assert entry["pr_url"] == pull and entry["commit"]["url"] == commit

    slack = json.dumps(S.render(CommitDetail(digest, knob)) + S.render(DigestParent(digest)), ensure_ascii=False)
    assert f"<{pull}|#42>" in slack and "/pull/42" not in slack

    feishu = json.dumps(F.render_cards(CommitDetail(digest, knob)), ensure_ascii=False)
    assert f"[PR #42]({pull})" in feishu
    assert server.fetches == 1  # one fetch for the digest, its files read from the mirror


async def test_an_unknown_host_gets_no_links_but_the_sha(server, upstream, make_services):
    services = await make_services(lambda: datetime(2026, 2, 1, tzinfo=UTC))
    digest = await services.builder.build(services.source(server.url_of(REPO)), WINDOW, "en")
    assert digest.repo_url is None and all(e.commit.url is None for e in digest.entries)
    markdown = render_report([digest])
    assert "](http" not in markdown and upstream.git("rev-parse", "--short=7", "HEAD").strip() in markdown


def test_link_templates_are_checked_in_one_sentence(make_settings):
    from bot.core.links import NAMED_STYLES
    from settings import LINK_STYLES, ConfigError, load_settings

    assert set(LINK_STYLES) == set(NAMED_STYLES)

    cgit = {"repo_url": "https://cgit.corp/{path}.git", "commit": "{repo_url}/commit/?id={sha}"}
    settings = make_settings(git_link_templates={"Code.Corp": cgit})
    source = open_source("git@code.corp:tools/lint.git", settings)
    assert source.commit_url("abc123") == "https://cgit.corp/tools/lint.git/commit/?id=abc123"
    assert source.links.change_url(source.web_url, 4) is None  # no template: no link
    with pytest.raises(ConfigError) as err:
        load_settings(git_link_templates={"code.corp": {"commit": "{repo_url}/c/{number}"}})
    assert "\n" not in str(err.value) and "GIT_LINK_TEMPLATES" in str(err.value)


# --- bounds: time, size ----------------------------------------------------------------------------


def test_a_fetch_that_hangs_is_killed_at_its_time_bound(server, cli, tmp_path):
    server.hang = True
    proc = cli("digest", "--repo", server.url_of(REPO), "--date", "2026-01-28", "--lang", "en",
               extra={"MIRROR_FETCH_TIMEOUT": "1"})  # fmt: skip
    assert proc.returncode == 1
    assert f"Fetching {server.url_of(REPO)} took longer than 1 s (MIRROR_FETCH_TIMEOUT)" in one_line(proc)
    assert packs_left(tmp_path / "data") == []


def test_a_fetch_past_its_size_bound_is_stopped_cleanly(server, cli, upstream, tmp_path):
    upstream.commit("chore: vendor a big blob", {"big.bin": os.urandom(3 * 1024 * 1024)}, when=at(16))
    server.push(REPO, upstream.path)
    args = ("digest", "--repo", server.url_of(REPO), "--date", "2026-01-28", "--lang", "en", "--format", "json")
    proc = cli(*args, extra={"MIRROR_MAX_MB": "1"})
    assert proc.returncode == 1
    assert "would grow past 1 MB (MIRROR_MAX_MB), so the fetch was stopped and the mirror not kept." in one_line(proc)
    assert packs_left(tmp_path / "data") == [] and list((tmp_path / "data" / "mirrors").glob("*.git")) == []
    again = cli(*args, extra={"MIRROR_MAX_MB": "10"})  # nothing half-written is left to trip over
    assert again.returncode == 0, again.stderr
    titles = [e["commit"]["title"] for e in json.loads(again.stdout)["digests"][0]["entries"]]
    assert "chore: vendor a big blob" in titles


# --- freshness: fetched before a digest whose window ends after the last fetch ----------------------


async def test_a_push_of_a_minute_ago_is_in_todays_digest(tmp_path, make_settings):
    now = datetime.now(UTC)
    work = GitRepo(tmp_path / "work")
    work.commit("feat: this morning", {"a.py": "a = 1\n"}, when=now - timedelta(hours=1))
    with GitHttpServer(tmp_path / "srv") as srv:
        srv.add_repo(REPO, work.path)
        source = open_source(srv.url_of(REPO), make_settings(mirror_fetch_interval=0))
        today = day_window(now.astimezone(SH).date(), "Asia/Shanghai")
        assert [c.title for c in await source.list_commits(today)] == ["feat: this morning"]
        work.commit("fix: pushed a minute ago", {"a.py": "a = 2\n"}, when=now - timedelta(minutes=1))
        srv.push(REPO, work.path)
        assert [c.title for c in await source.list_commits(today)] == ["fix: pushed a minute ago", "feat: this morning"]
        fetches = srv.fetches
        yesterday = day_window(now.astimezone(SH).date() - timedelta(days=1), "Asia/Shanghai")
        await source.list_commits(yesterday)  # ended before the last fetch began: nothing to fetch
        assert srv.fetches == fetches == 2


async def test_two_tasks_reading_at_once_fetch_once(server, make_settings):
    server.delay = 0.4  # a slow server: the second reader asks while the first one fetches
    one, two = (open_source(server.url_of(REPO), make_settings()) for _ in range(2))
    first, second = await asyncio.gather(one.list_commits(WINDOW), two.list_commits(WINDOW))
    assert [c.sha for c in first] == [c.sha for c in second] and len(first) == 2
    assert (server.sessions, server.fetches) == (2, 1)  # one fetch (and its one `ls-remote` for HEAD)


def test_two_processes_reading_at_once_fetch_once(server, cli):
    server.delay = 0.6
    args = ("digest", "--repo", server.url_of(REPO), "--date", "2026-01-28", "--format", "json")
    procs = [cli.start(*args) for _ in range(2)]  # type: ignore[attr-defined]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all("feat: add a retry knob (#42)" in out for out, _ in outs)
    assert (server.sessions, server.fetches) == (2, 1)  # the other waited, then read the fresh mirror


# --- credentials: a token typed into a URL is never echoed back --------------------------------------


def _everything_kept(data: Path, redis_url: str, prefix: str) -> str:
    import redis

    seen = [str(p) for p in data.rglob("*")]
    seen += [p.read_text("utf-8", "replace") for p in data.rglob("*") if p.is_file() and p.stat().st_size < 1 << 20]
    r = redis.Redis.from_url(redis_url)
    for key in r.scan_iter(f"{prefix}*"):
        seen.append(key.decode("utf-8", "replace"))
        kind = r.type(key).decode()
        read = {"string": r.get, "hash": r.hgetall, "set": r.smembers}.get(kind)
        ranged = {"list": r.lrange, "zset": r.zrange}.get(kind)
        value = read(key) if read else ranged(key, 0, -1) if ranged else b""
        seen.append(repr(value))
    return "\n".join(seen)


def test_a_token_typed_into_a_url_is_never_echoed_by_the_cli(server, cli, tmp_path, redis_url):
    typed = server.url_of(REPO, credentials=f"bob:{TOKEN}")
    seen = []
    for fmt in ("json", "markdown"):
        proc = cli("digest", "--repo", typed, "--date", "2026-01-28", "--format", fmt,
                   extra={"LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json"})  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        seen += [proc.stdout, proc.stderr]
    server.hang = True  # and a failure's sentence
    today = datetime.now(SH).date().isoformat()  # today's digest: fetched again
    proc = cli("digest", "--repo", typed, "--date", today, "--lang", "en",
               extra={"MIRROR_FETCH_TIMEOUT": "1", "MIRROR_FETCH_INTERVAL": "0", "LOG_LEVEL": "DEBUG"})  # fmt: skip
    assert proc.returncode == 1 and "MIRROR_FETCH_TIMEOUT" in proc.stderr
    seen += [proc.stdout, proc.stderr, _everything_kept(tmp_path / "data", redis_url, cli.prefix)]  # type: ignore[attr-defined]
    assert "retry knob" in "".join(seen) and "bob" not in "".join(seen)
    assert TOKEN not in "\n".join(seen)


async def test_a_token_typed_into_a_url_in_chat_is_never_echoed(server, make_bot, slack, caplog, tmp_path, redis_url):
    caplog.set_level(logging.DEBUG)
    bot = await make_bot(git_link_templates={"127.0.0.1": "gitea"})
    typed = server.url_of(REPO, credentials=f"bob:{TOKEN}")
    for text in (f"subscribe {typed}", "subscriptions", f"2026-01-28 {typed}", f"https://bob:{TOKEN}@nowhere/"):
        status, _ = await bot.sender.slash(text)
        assert status == 200
        await bot.settle()
    said = [shown(m) for m in slack.top_level(CHANNEL)] + [json.dumps(m, default=str) for m in slack.calls]
    everything = "\n".join(said) + caplog.text
    everything += _everything_kept(tmp_path / "data", redis_url, bot.services.settings.redis_prefix)
    assert f"{server.url}/{REPO}" in everything and "retry knob" in everything  # it did work, under its clean URL
    assert TOKEN not in everything


async def test_a_private_repository_is_read_with_gits_own_credential_helper(tmp_path, upstream, make_settings):
    """The operator's credentials reach git through its credential helper (here: in the
    environment, GIT_CONFIG_*); the bot never holds them, and a refusal is one sentence."""
    with GitHttpServer(tmp_path / "priv", auth=("bob", TOKEN)) as srv:
        srv.add_repo(REPO, upstream.path)
        with pytest.raises(BotError) as err:
            await open_source(srv.url_of(REPO), make_settings()).list_commits(WINDOW)
        said = localize(err.value, "en")
        assert "cannot read it" in said and "credential helper" in said and TOKEN not in said
        helper = f"!f() {{ echo username=bob; echo password={TOKEN}; }}; f"
        env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "credential.helper", "GIT_CONFIG_VALUE_0": helper}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            source = open_source(srv.url_of(REPO), make_settings(data_dir=tmp_path / "d2"))
            assert len(await source.list_commits(WINDOW)) == 2
        finally:
            for k, v in old.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def test_a_fork_named_by_a_url_with_credentials_keeps_none(make_settings):
    from bot.fork.naming import parse_fork

    spec = parse_fork(f"https://bob:{TOKEN}@git.corp.example/org/fork.git@ours", "en", make_settings())
    assert (spec.kind, spec.where, spec.branch) == ("url", "https://git.corp.example/org/fork.git", "ours")
    assert TOKEN not in repr(spec)


async def test_git_url_hosts_limits_what_chat_users_may_name(server, make_bot, slack):
    bot = await make_bot(git_url_hosts="gitee.com, git.corp.example")
    status, _ = await bot.sender.slash(f"2026-01-28 {server.url_of(REPO)}")
    assert status == 200
    await bot.settle()
    said = " ".join(e["text"] for e in slack.ephemerals)
    assert "git URLs may name only these hosts: git.corp.example, gitee.com (127.0.0.1 is not one" in said
    assert server.requests == [] and not slack.top_level(CHANNEL)  # nothing fetched, nothing posted
