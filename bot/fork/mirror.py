"""Bare mirrors of remote forks (GitHub, GitLab: any registry entry with a clone URL) under
DATA_DIR/forks, kept by `git fetch` through the shared mirror machinery (bot/sources/mirror.py:
bounded in time, size and frequency, one fetch at a time per mirror across processes).

A fork named as owner/name is read from a mirror the bot keeps (and, when the digest's upstream
comes from the GitHub API, the upstream branch is fetched into the same mirror: a fork shares most
of its objects with its upstream, so that costs little). Its bounds are the fork's settings:
FORK_FETCH_TIMEOUT, FORK_MIRROR_MAX_MB, FORK_FETCH_INTERVAL (a ref fetched less than that long ago
is used as it is). The URL comes from the repository's source entry (bot/sources/registry.py): for
GitHub FORK_GIT_URL (a template with {repo}), by default the web host of GITHUB_API_URL, so tests
point it at local bare repositories (file://) and never reach a network; for GitLab GITLAB_URL/PATH.git.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr

from settings import Settings

from ..core.models import SourceError, UsageError
from ..i18n import phrase
from ..sources.mirror import BareMirror, MirrorNotFound, MirrorTooLarge, base_env
from ..sources.registry import clone_url as registry_clone_url
from ..sources.registry import github_clone_prefix, parse_repo
from .naming import ForkNotFound

__all__ = ["Mirror", "MirrorTooLarge", "clone_url", "git_tokens"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")  # plain http there never leaves the machine


async def git_tokens(settings: Settings, repos: Iterable[str]) -> dict[str, str]:
    """With a GitHub App, the installation token each GitHub repository among `repos` (registry
    names) is fetched with, by clone URL — asked now, on the event loop, since the mirrors fetch
    in a worker thread (the app keeps its tokens in Redis: usually no request). Empty without an
    app (GITHUB_TOKEN is used as before); none for a repository the app is not installed on."""
    if not settings.github_app_enabled:
        return {}
    tokens: dict[str, str] = {}
    for repo in dict.fromkeys(repos):
        try:
            named = parse_repo(repo, settings)
        except UsageError:
            continue  # not a name git fetches: the fetch itself says so
        if token := await named.entry.token_for_git(named.where, settings):
            tokens[clone_url(settings, repo)] = token
    return tokens


def clone_url(settings: Settings, repo: str) -> str:
    """Where git fetches `repo` (a registry name: `owner/name`, `gitlab:group/project`): its
    source's entry says (bot/sources/registry.py)."""
    return registry_clone_url(repo, settings)


class Mirror:
    """One bare repository under `root`, named after a remote repository (its registry name)."""

    def __init__(
        self, root: Path, repo: str, settings: Settings, lang: str = "en", tokens: Mapping[str, str] | None = None
    ):
        self.repo = repo
        self.settings = settings
        self.tokens = tokens or {}  # a GitHub App's installation tokens by clone URL (git_tokens)
        self.lang = lang
        self.path = Path(root) / "forks" / (repo.replace("/", "+").replace(":", "+") + ".git")
        self.bare = BareMirror(
            self.path,
            repo,
            timeout=settings.fork_fetch_timeout,
            max_bytes=settings.fork_mirror_max_mb * 1024 * 1024,
            interval=settings.fork_fetch_interval,
            env=self._env,
        )

    @property
    def git_dir(self) -> str:
        return str(self.path)

    def fetch_branch(self, source_repo: str, branch: str | None, local_ref: str, *, force: bool = False) -> str:
        """Fetch `branch` (None: the default branch) of remote repository `source_repo` into
        `local_ref` of this mirror and return the commit it points at. `force`: even if it was
        fetched within FORK_FETCH_INTERVAL."""
        remote_ref = f"refs/heads/{branch}" if branch else "HEAD"
        try:
            self.bare.fetch(
                clone_url(self.settings, source_repo),
                [f"+{remote_ref}:{local_ref}"],
                key=f"{source_repo}\0{branch}",
                force=force,
                ready=lambda: self.bare.resolve(local_ref) is not None,
                branch=branch,
                name=source_repo,
            )
        except MirrorNotFound as exc:
            raise ForkNotFound(exc.args[0]) from None
        sha = self.bare.resolve(local_ref)
        if not sha:
            raise SourceError(phrase("downstream.fetch_failed", repo=source_repo, reason="no commit"))
        return sha

    def _env(self, url: str) -> dict[str, str]:
        """The host's token (for a URL under GitHub's clone address GITHUB_TOKEN, or with a GitHub
        App the installation token `tokens` holds for it; GITLAB_TOKEN for one under GITLAB_URL —
        where the source's API client sends it already; none for any other host, nor over plain
        http to GitHub, but an app's token to this machine), as an HTTP header given in the
        environment (never on a command line another user could read, never logged)."""
        env = base_env()
        token, user = None, ""
        parts = urlsplit(url)
        if url.startswith(github_clone_prefix(self.settings)):
            user = "x-access-token"
            if self.settings.github_app_enabled:  # the app's token for what it fetches (plain http: loopback only)
                if url in self.tokens and (parts.scheme == "https" or parts.hostname in LOOPBACK):
                    token = SecretStr(self.tokens[url])
            elif parts.scheme == "https":
                token = self.settings.github_token
        elif url.startswith(self.settings.gitlab_url.rstrip("/") + "/"):
            token, user = self.settings.gitlab_token, "oauth2"  # GitLab: any user name, the token as password
        if token is not None:
            basic = base64.b64encode(f"{user}:{token.get_secret_value()}".encode()).decode()
            env.update(
                {
                    "GIT_CONFIG_COUNT": "1",
                    "GIT_CONFIG_KEY_0": "http.extraHeader",
                    "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
                }
            )
        return env
