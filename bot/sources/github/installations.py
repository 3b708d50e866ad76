"""A GitHub App's installation tokens, shared by every process through Redis.

With GITHUB_APP_ID and its private key the bot reads GitHub as the app: a repository's requests
carry the token of the installation covering its owner. Each is asked of GitHub once for everyone:

- the installation of an owner (GET /repos/{owner}/{repo}/installation), kept a day under
  `ghapp:{app}:owner:{owner}`; none (404) → one sentence naming where to install the app (its page
  from GET /app, …/apps/<slug>/installations/new; else the app settings);
- its token (POST /app/installations/{id}/access_tokens, valid an hour), kept under
  `ghapp:{app}:token:{installation}` until REFRESH_MARGIN before it expires, fetched under the
  store's single flight: processes asking at once wait for the one fetching (one fetch);
- a token GitHub refuses (401: revoked, or expired early) is dropped by the client
  (client.py's `_run`), which asks once more.

The JWT is signed with the key read at start (app_jwt.py): a key that is no RSA key is one
sentence when the process starts, never the key. Without a store (a CLI run before it opens
Redis, a script) the tokens are kept in this process only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from settings import Settings

from ...core.models import SourceError
from ...core.store import Store
from ...i18n import phrase
from .app_jwt import signer
from .client import AppRequests, _guess_web_url

log = logging.getLogger(__package__)

REFRESH_MARGIN = 300  # seconds before its expiry a token is replaced (GitHub's last minutes are not ours)
OWNER_TTL = 86400  # an owner's installation id, kept a day (a reinstall gets a new id: a 401 then drops it)


class AppNotInstalled(SourceError):
    """The app has no installation covering the repository (the sentence says where to install it)."""


class _InstallationGone(Exception):
    """The kept installation id no longer exists (GitHub's 404 to its token): look it up again."""


class GitHubApp:
    """The app's installation tokens for every repository this process reads."""

    def __init__(self, settings: Settings, store: Store | None = None, requests: AppRequests | None = None):
        assert settings.github_app_id and settings.github_app_private_key
        self.app_id = settings.github_app_id
        self.store = store
        self.requests = requests or AppRequests(
            settings.github_api_url, self.app_id, signer(settings.github_app_private_key.get_secret_value())
        )
        self._web = _guess_web_url(settings.github_api_url, "") or "https://github.com/"
        self._memory: dict[str, tuple[Any, float]] = {}  # key → (value, until): this process's copy
        self._install_url: str | None = None
        self.token_fetches = 0  # tokens this process fetched (bench/bench_github_app.py)

    # --- what the client asks ------------------------------------------------------------------
    async def token(self, repo: str) -> str:
        """The installation token for `repo` (owner/name), fetched once for all processes. An
        installation gone since it was kept (uninstalled, installed again) is looked up afresh."""
        try:
            return await self._token(repo, await self.installation(repo))
        except _InstallationGone:
            return await self._token(repo, await self.installation(repo, fresh=True))

    async def _token(self, repo: str, installation: int) -> str:
        key = self._key("token", installation)

        async def cached() -> dict[str, Any] | None:
            hit = await self._get(key)
            fresh = isinstance(hit, dict) and float(hit.get("expires_at", 0)) - REFRESH_MARGIN > time.time()
            return hit if fresh else None

        async def produce() -> dict[str, Any]:
            granted = await asyncio.to_thread(self.requests.access_token, installation)
            if granted is None:
                raise _InstallationGone()
            token, expires_at = granted
            self.token_fetches += 1
            value = {"token": token, "expires_at": expires_at}
            if (ttl := int(expires_at - time.time() - REFRESH_MARGIN)) > 0:
                await self._set(key, value, ttl)
            return value

        if self.store is None:
            value = await cached() or await produce()
        else:
            value = await self.store.single_flight(self.store.k(key), produce, cached=cached)
        return str(value["token"])

    async def drop(self, repo: str, token: str) -> None:
        """Forget `token` (GitHub refused it) unless another process has replaced it already."""
        key = self._key("token", await self.installation(repo))
        hit = await self._get(key)
        if isinstance(hit, dict) and hit.get("token") == token:
            log.info("GitHub refused the cached installation token for %s: fetching a new one", repo)
            await self._forget(key)

    async def installation(self, repo: str, *, fresh: bool = False) -> int:
        """The id of the installation covering `repo`'s owner; `fresh`: asked of GitHub now, for
        this very repository (an installation may cover only some of an owner's repositories)."""
        owner, _, name = repo.partition("/")
        key = self._key("owner", owner.lower())
        if not fresh and (hit := await self._get(key)) is not None:
            return int(hit)
        found = await asyncio.to_thread(self.requests.installation, owner, name)
        if found is None:
            raise AppNotInstalled(phrase("errors.github_app_not_installed", repo=repo, url=await self.install_url()))
        await self._set(key, found, OWNER_TTL)
        return found

    async def git_token(self, repo: str) -> str | None:
        """The installation token `git fetch` of `repo` sends (a fork's mirror); None where the app
        is not installed: git then fetches without one (a public fork)."""
        try:
            return await self.token(repo)
        except AppNotInstalled:
            return None

    async def install_url(self) -> str:
        """Where an owner installs the app: its page's installations/new (GET /app, once), else
        the app settings."""
        if self._install_url is None:
            page = await asyncio.to_thread(self.requests.install_page)
            self._install_url = f"{page.rstrip('/')}/installations/new" if page else None
        return self._install_url or f"{self._web.rstrip('/')}/settings/apps"

    # --- the cache: Redis (everyone's) when the process has a store, and this process's memory ---
    # (a CLI run may ask before it opens its store: what it fetched then is not fetched again)
    def _key(self, *parts: Any) -> str:
        return ":".join(str(p) for p in ("ghapp", self.app_id, *parts))

    async def _get(self, key: str) -> Any | None:
        if self.store is not None and (hit := await self.store.get_json(self.store.k(key))) is not None:
            return hit
        value, until = self._memory.get(key, (None, 0.0))
        return value if until > time.time() else None

    async def _set(self, key: str, value: Any, ttl: int) -> None:
        self._memory[key] = (value, time.time() + ttl)
        if self.store is not None:
            await self.store.set_json(self.store.k(key), value, ttl=ttl)

    async def _forget(self, key: str) -> None:
        self._memory.pop(key, None)
        if self.store is not None:
            await self.store.delete(self.store.k(key))


_APPS: dict[tuple[str, str], GitHubApp] = {}


def app_for(settings: Settings | None, store: Store | None = None) -> GitHubApp | None:
    """The process's GitHub App for these settings (None: no app configured, the personal token
    path). Built once — its key read, and checked, then — and said once when it wins over
    GITHUB_TOKEN; `store` (Services.build hands it) makes its tokens everyone's."""
    if settings is None or not settings.github_app_enabled:
        return None
    assert settings.github_app_id
    key = (settings.github_app_id, settings.github_api_url.rstrip("/"))
    app = _APPS.get(key)
    if app is None:
        app = _APPS[key] = GitHubApp(settings, store)
        if settings.github_token is not None:
            log.warning("%s", phrase("ops.github_app_wins", app=settings.github_app_id))
    elif store is not None and app.store is not store:
        app.store = store
    return app


async def git_token(where: str, settings: Settings) -> str | None:
    """The installation token `git fetch` of GitHub repository `where` sends (a fork's mirror;
    the registry's `git_token`); None without an app, or where it is not installed."""
    app = app_for(settings)
    return await app.git_token(where) if app is not None else None
