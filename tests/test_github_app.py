"""A GitHub App instead of a personal token: the real PyGithub against the fake GitHub, which checks
the app's JWT with its public key and takes an installation token only for that installation's
repositories (tests/fakes/github_app.py). The test's RSA key is made at test time."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime

import pytest

from bot.core.models import BotError, NotFoundError
from bot.core.window import day_window
from bot.sources.github import GitHubSource
from bot.sources.github.installations import REFRESH_MARGIN, GitHubApp
from settings import ConfigError, load_settings
from tests.fakes.github_app import new_private_pem
from tests.fakes.github_server import FakeFile, FakeGitHub

REPO = "octo/widgets"
DAY = "2026-01-28"
WINDOW = day_window(datetime(2026, 1, 28).date(), "Asia/Shanghai")
PAT = "ghp_PersonalTokenPersonalToken12"


@pytest.fixture
def github():
    """The fake GitHub with the app installed on `octo` and a day of commits in octo/widgets."""
    with FakeGitHub() as gh:
        app = gh.enable_app(app_id="4242", slug="digest-bot")
        app.install("octo")
        gh.add_repo(REPO)
        gh.add_repo("elsewhere/tool")
        for i, hour in enumerate((1, 2, 3)):  # UTC: 09:00-11:00 in Shanghai on DAY
            gh.add_commit(
                REPO,
                f"feat: knob {i}",
                committed_at=datetime(2026, 1, 28, hour, tzinfo=UTC),
                files=[FakeFile(f"knob{i}.py", "added", additions=5)],
            )
        yield gh


def app_settings(make_settings, gh: FakeGitHub, **overrides):
    assert gh.app is not None
    values = {
        "github_api_url": gh.url,
        "github_app_id": gh.app.app_id,
        "github_app_private_key": gh.app.private_pem,
        **overrides,
    }
    return make_settings(**values)


def app_env(gh: FakeGitHub, **extra: str) -> dict[str, str]:
    assert gh.app is not None
    return {
        "DEFAULT_LANG": "en",
        "GITHUB_API_URL": gh.url,
        "GITHUB_APP_ID": gh.app.app_id,
        "GITHUB_APP_PRIVATE_KEY": gh.app.private_pem,
        **extra,
    }


def one_sentence(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def token_requests(gh: FakeGitHub) -> int:
    return sum(1 for r in gh.requests if r.method == "POST" and r.path.endswith("/access_tokens"))


# --- settings -------------------------------------------------------------------------------------


def test_app_settings_say_what_is_wrong_in_one_sentence_without_the_key(tmp_path):
    pem = new_private_pem()
    assert load_settings(github_app_id="4242", github_app_private_key=pem).github_app_enabled
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    from_file = load_settings(github_app_id="4242", github_app_private_key_file=key_file)
    assert from_file.github_app_private_key is not None and from_file.github_app_private_key.get_secret_value() == pem
    assert not load_settings().github_app_enabled  # the personal-token path, unchanged
    for values, says in [
        ({"github_app_id": "4242"}, "GITHUB_APP_PRIVATE_KEY_FILE (or GITHUB_APP_PRIVATE_KEY) is needed"),
        (
            {"github_app_id": "4242", "github_app_private_key": "secret-not-a-key"},
            "GITHUB_APP_PRIVATE_KEY is not a PEM",
        ),
        ({"github_app_id": "4242", "github_app_private_key_file": tmp_path / "none.pem"}, "cannot be read"),
        ({"github_app_id": "my app", "github_app_private_key": pem}, "GITHUB_APP_ID must be"),
    ]:
        with pytest.raises(ConfigError) as caught:
            load_settings(**values)
        assert says in str(caught.value) and "secret-not-a-key" not in str(caught.value)
        assert "PRIVATE KEY-----\n" not in str(caught.value)


def test_a_key_that_is_no_rsa_key_is_one_sentence_at_start(run, github):
    broken = "-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END RSA PRIVATE KEY-----"
    proc = run("digest", "--repo", REPO, "--date", DAY, env=app_env(github, GITHUB_APP_PRIVATE_KEY=broken))
    assert proc.returncode != 0
    line = one_sentence(proc)
    assert "GitHub App's private key" in line and "c2VjcmV0" not in proc.stderr + proc.stdout
    assert not github.requests  # said before anything is asked of GitHub


# --- digests as the app ---------------------------------------------------------------------------


def test_app_digest_in_two_processes_fetches_one_installation_token(run, github):
    """Two `digest` processes read octo/widgets as the app: the installation token the first
    fetched (JWT checked by the fake) is the second's too, through Redis; personal token unused."""
    env = app_env(github, GITHUB_TOKEN=PAT)
    first = run("digest", "--repo", REPO, "--date", DAY, "--lang", "en", env={**env, "LOG_LEVEL": "WARNING"})
    assert first.returncode == 0, first.stderr
    assert "knob 0" in first.stdout and "knob 2" in first.stdout
    second = run("digest", "--repo", REPO, "--date", DAY, "--lang", "en", env=env)
    assert second.returncode == 0, second.stderr
    assert github.app is not None and github.app.tokens_issued == 1 and token_requests(github) == 1
    assert sum(1 for r in github.requests if r.path.endswith("/installation")) == 1  # the owner's, kept
    used = {
        r.headers.get("authorization", "")
        for r in github.requests
        if r.path.startswith("/repos/octo/widgets") and not r.path.endswith("/installation")
    }
    assert used and all(a.startswith("token ghs_") for a in used)
    assert PAT not in " ".join(r.headers.get("authorization", "") for r in github.requests)
    assert first.stderr.count("GitHub is read as the GitHub App 4242") == 1, first.stderr  # which wins, once


async def test_token_refreshed_before_its_hour_ends_and_after_a_401(make_settings, store, github):
    """Digests across the token's expiry: with less than REFRESH_MARGIN left a new token is fetched
    (one refresh) before GitHub would refuse the old one; a token GitHub refuses early (revoked)
    is dropped and fetched once more."""
    assert github.app is not None
    github.app.token_lifetime = REFRESH_MARGIN + 2  # its hour ends two seconds from now (for us)
    settings = app_settings(make_settings, github)
    app = GitHubApp(settings, store)
    source = GitHubSource(REPO, settings, app=app)
    assert [c.title for c in await source.list_commits(WINDOW)] == ["feat: knob 2", "feat: knob 1", "feat: knob 0"]
    assert github.app.tokens_issued == 1
    first = set(github.app.issued)
    await asyncio.sleep(2.1)
    github.app.token_lifetime = 3600
    assert len(await GitHubSource(REPO, settings, app=app).list_commits(WINDOW)) == 3
    assert github.app.tokens_issued == 2  # refreshed once
    last = [r for r in github.requests if r.path == f"/repos/{REPO}/commits"][-1]
    assert last.headers["authorization"].partition(" ")[2] not in first  # with the new token
    refused = [r for r in github.requests if r.path.startswith("/repos/") and _refused(github, r)]
    assert not refused  # nothing was sent with a token past its expiry
    # GitHub revokes the token early (an uninstall and reinstall, an admin): one 401, one new token
    github.app.issued.clear()
    assert len(await GitHubSource(REPO, settings, app=app).list_commits(WINDOW)) == 3
    assert github.app.tokens_issued == 3


def _refused(github: FakeGitHub, request) -> bool:
    """Whether the fake would refuse this request's token now (unknown, or expired when sent is
    approximated by: not among the tokens it still holds as valid)."""
    token = request.headers.get("authorization", "").partition(" ")[2]
    if request.path.endswith("/installation") or github.app is None:
        return False
    issued = github.app.issued.get(token)
    return issued is None or issued.expires_at <= request.at


async def test_concurrent_processes_share_one_token_fetch(make_settings, store, github):
    """Three processes' apps (separate clients, one Redis) asking at once: one token fetched."""
    settings = app_settings(make_settings, github)
    github.latency = 0.05
    apps = [GitHubApp(settings, store) for _ in range(3)]
    sources = [GitHubSource(REPO, settings, app=app) for app in apps for _ in range(2)]
    listed = await asyncio.gather(*(s.list_commits(WINDOW) for s in sources))
    assert all(len(commits) == 3 for commits in listed)
    assert github.app is not None and github.app.tokens_issued == 1
    assert sum(app.token_fetches for app in apps) == 1


# --- what goes wrong, in one sentence -------------------------------------------------------------


async def test_pr_labels_by_graphql_survive_a_revoked_token(make_settings, store, github):
    """GraphQL answers a refused installation token with 401 too: a new token, not "no labels"."""
    github.add_pull(REPO, 7, labels=("breaking",))
    settings = app_settings(make_settings, github)
    source = GitHubSource(REPO, settings, app=GitHubApp(settings, store))
    await source.default_branch()
    assert github.app is not None
    github.app.issued.clear()  # revoked
    assert await source.pr_labels([7]) == {7: ["breaking"]}
    assert github.app.tokens_issued == 2


async def test_a_reinstalled_app_is_found_under_its_new_installation(make_settings, store, github):
    """The owner uninstalled and installed the app again: the kept installation id answers 404,
    the new one is looked up and read with; no sentence for the user."""
    settings = app_settings(make_settings, github)
    app = GitHubApp(settings, store)
    assert len(await GitHubSource(REPO, settings, app=app).list_commits(WINDOW)) == 3
    assert github.app is not None
    github.app.uninstall("octo")
    github.app.install("octo")
    assert len(await GitHubSource(REPO, settings, app=app).list_commits(WINDOW)) == 3
    assert github.app.tokens_issued == 2


async def test_a_repository_the_app_is_not_installed_on_says_where_to_install(make_settings, store, github):
    settings = app_settings(make_settings, github)
    source = GitHubSource("elsewhere/tool", settings, app=GitHubApp(settings, store))
    with pytest.raises(BotError) as caught:
        await source.default_branch()
    said = str(caught.value)
    assert said == (
        "The GitHub App is not installed on elsewhere/tool: install it at "
        "https://github.com/apps/digest-bot/installations/new (and give it access to elsewhere/tool)."
    )


async def test_an_installation_without_the_repository_says_where_to_install(make_settings, store, github):
    """The owner's installation is known (kept from another repository) but does not cover this one."""
    assert github.app is not None
    github.app.install("acme", repos=["acme/one"])
    github.add_repo("acme/one")
    github.add_repo("acme/two")
    settings = app_settings(make_settings, github)
    app = GitHubApp(settings, store)
    assert await GitHubSource("acme/one", settings, app=app).default_branch() == "main"
    with pytest.raises(BotError) as caught:
        await GitHubSource("acme/two", settings, app=app).default_branch()
    assert "The GitHub App is not installed on acme/two: install it at" in str(caught.value)
    with pytest.raises(NotFoundError):  # a repository that does not exist stays "not found"
        await GitHubSource("octo/nothing", settings, app=app).default_branch()


def test_wrong_key_and_clock_skew_are_one_sentence(run, github):
    other_key = new_private_pem()
    proc = run("digest", "--repo", REPO, "--date", DAY, env=app_env(github, GITHUB_APP_PRIVATE_KEY=other_key))
    line = one_sentence(proc)
    assert "GitHub rejected the GitHub App's token (A JSON web token could not be decoded)" in line
    assert "clock" in line and "PRIVATE KEY" not in proc.stderr and "eyJ" not in proc.stderr
    assert github.app is not None
    github.app.clock_offset = 3600.0  # GitHub's clock an hour ahead of ours: our JWT has expired
    proc = run("digest", "--repo", REPO, "--date", DAY, env=app_env(github))
    line = one_sentence(proc)
    assert "'Expiration time' claim ('exp')" in line and "this server's clock is right" in line


async def test_enterprise_base_url(make_settings, store):
    with FakeGitHub(prefix="/api/v3") as gh:
        app = gh.enable_app(app_id="77", slug="digest-bot")
        app.install("corp")
        gh.add_repo("corp/tool")
        settings = make_settings(github_api_url=gh.url, github_app_id="77", github_app_private_key=app.private_pem)
        source = GitHubSource("corp/tool", settings, app=GitHubApp(settings, store))
        assert await source.default_branch() == "main"
        assert app.tokens_issued == 1
        with pytest.raises(BotError) as caught:
            await GitHubSource("else/tool", settings, app=GitHubApp(settings, store)).default_branch()
        assert f"install it at {gh.origin}/apps/digest-bot/installations/new" in str(caught.value)


# --- fork mirrors ---------------------------------------------------------------------------------


def test_a_fork_is_fetched_with_the_apps_installation_token(run, github, tmp_path):
    """`--fork org/our-fork@ours` as the app: git fetches the fork over HTTP with Basic
    x-access-token:<installation token>, a token the fake GitHub issued for org's installation
    (the git server asks the fake GitHub); never printed. Not installed on org: no token, refused."""
    import json

    from tests.downstream_repos import build
    from tests.fakes.git_http import GitHttpServer

    repos = build(tmp_path / "repos")
    app = github.app
    assert app is not None

    def honoured(user: str, password: str) -> bool:
        issued = app.installation_token(password)
        return user == "x-access-token" and issued is not None and app.covers(issued, "org/our-fork")

    with GitHttpServer(tmp_path / "git", auth=honoured) as srv:
        srv.add_repo("org/our-fork", repos["fork"].path)
        env = app_env(github, FORK_GIT_URL=f"{srv.url}/{{repo}}.git")
        args = ("digest", "--repo", str(repos["up"].path), "--date", "2026-01-28", "--format", "json")
        refused = run(*args, "--fork", "org/our-fork@ours", env=env)
        assert refused.returncode == 2 and "The fork org/our-fork does not exist" in one_sentence(refused)
        assert srv.fetches == 0
        app.install("org")
        proc = run(*args, "--fork", "org/our-fork@ours", env=env)
        assert proc.returncode == 0, proc.stderr
        entries = {e["commit"]["title"]: e for e in json.loads(proc.stdout)["digests"][0]["entries"]}
        assert entries["fix: line two of b"]["downstream"] == {"patched_files": ["b.py"], "conflict": False, "hunks": 1}
        assert srv.fetches == 1 and app.tokens_issued == 1
        assert not any(token in proc.stdout + proc.stderr for token in app.issued)


# --- CODEOWNERS and release notes -----------------------------------------------------------------


async def test_codeowners_and_release_notes_are_read_as_the_app(make_services, github):
    """A private repository: its digest's owners come from .github/CODEOWNERS and the learned
    profile's release notes from its Releases, both read with the installation token."""
    repo = "octo/private"
    github.add_repo(repo, private=True)
    github.add_commit(
        repo,
        "feat: an endpoint",
        committed_at=datetime(2026, 1, 28, 2, tzinfo=UTC),
        files=[FakeFile("src/api.py", "added", additions=9)],
        contents={".github/CODEOWNERS": "/src/ @octo/api\n", "src/api.py": "x = 1\n"},
    )
    github.add_release(repo, "v1.0.0", body="## Features\n- endpoints", published_at=datetime(2026, 1, 20, tzinfo=UTC))
    assert github.app is not None
    s = await make_services(
        github_api_url=github.url, github_app_id=github.app.app_id, github_app_private_key=github.app.private_pem
    )
    source = s.source(repo)
    digest = await s.builder.build(source, WINDOW, "en")
    assert [e.owners for e in digest.entries] == [("@octo/api",)]
    assert await source.release_bodies(datetime(2026, 2, 1, tzinfo=UTC)) == ["## v1.0.0\n\n## Features\n- endpoints"]
    read = [r for r in github.requests if r.path.endswith("CODEOWNERS") or r.path.endswith("/releases")]
    assert read and all(r.headers["authorization"].startswith("token ghs_") for r in read)
    assert github.app.tokens_issued == 1
