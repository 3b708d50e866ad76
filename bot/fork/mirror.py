"""Bare mirrors of remote repositories (GitHub, GitLab: any registry entry with a clone URL) under
DATA_DIR/forks, kept by `git fetch`.

A fork named as owner/name is read from a mirror the bot keeps (and, when the digest's upstream
comes from the GitHub API, the upstream branch is fetched into the same mirror: a fork shares most
of its objects with its upstream, so that costs little). Fetches are bounded:

- in time: FORK_FETCH_TIMEOUT seconds, then the fetch is killed;
- in size: FORK_MIRROR_MAX_MB for the mirror's object store, watched while git downloads (its
  temporary pack grows on disk) — the fetch is killed and its partial pack removed at the bound;
- in frequency: a ref fetched less than FORK_FETCH_INTERVAL seconds ago is used as it is.

Concurrent fetches into one mirror (several channels' digests, several processes) take turns on a
lock file. The URL comes from the repository's source entry (bot/sources/registry.py): for GitHub
FORK_GIT_URL (a template with {repo}), by default the web host of GITHUB_API_URL, so tests point it
at local bare repositories (file://) and never reach a network; for GitLab GITLAB_URL/PATH.git.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from settings import Settings

from ..core.models import SourceError
from ..i18n import phrase
from ..sources.registry import clone_url as registry_clone_url
from .git import base_env
from .naming import ForkNotFound

POLL_SECONDS = 0.2
_NOT_FOUND = re.compile(
    r"repository .* not found|does not appear to be a git repository|"
    r"not found|could not read from remote repository|could not read username|authentication failed",
    re.I,
)
_NO_REF = re.compile(r"couldn't find remote ref", re.I)


class MirrorTooLarge(SourceError):
    """The mirror would grow past FORK_MIRROR_MAX_MB."""


def clone_url(settings: Settings, repo: str) -> str:
    """Where git fetches `repo` (a registry name: `owner/name`, `gitlab:group/project`): its
    source's entry says (bot/sources/registry.py)."""
    return registry_clone_url(repo, settings)


def _tree_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass  # a temporary file git just renamed or removed
    return total


class Mirror:
    """One bare repository under `root`, named after a remote repository (its registry name)."""

    def __init__(self, root: Path, repo: str, settings: Settings, lang: str = "en"):
        self.repo = repo
        self.path = Path(root) / "forks" / (repo.replace("/", "+").replace(":", "+") + ".git")
        self.settings = settings
        self.lang = lang
        self.timeout = settings.fork_fetch_timeout
        self.max_bytes = settings.fork_mirror_max_mb * 1024 * 1024
        self.interval = settings.fork_fetch_interval

    @property
    def git_dir(self) -> str:
        return str(self.path)

    # --- public ---------------------------------------------------------------------------------
    def fetch_branch(self, source_repo: str, branch: str | None, local_ref: str, *, force: bool = False) -> str:
        """Fetch `branch` (None: the default branch) of remote repository `source_repo` into
        `local_ref` of this mirror and return the commit it points at. `force`: even if it was
        fetched within FORK_FETCH_INTERVAL."""
        self._init()
        with self._locked():
            stamp = self.path / "digest-bot-fetched" / hashlib.sha1(f"{source_repo}\0{branch}".encode()).hexdigest()
            sha = self._resolve(local_ref)
            if sha and not force and stamp.exists() and time.time() - stamp.stat().st_mtime < self.interval:
                return sha
            self._fetch(source_repo, branch, local_ref)
            stamp.parent.mkdir(exist_ok=True)
            stamp.touch()
            sha = self._resolve(local_ref)
        if not sha:
            raise SourceError(phrase("downstream.fetch_failed", repo=source_repo, reason="no commit"))
        return sha

    # --- internals ------------------------------------------------------------------------------
    def _git(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["git", "--git-dir", str(self.path), *args], capture_output=True, text=True, env=base_env(), timeout=timeout
        )

    def _init(self) -> None:
        if (self.path / "HEAD").exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["git", "init", "--bare", "-q", str(self.path)], capture_output=True, text=True, env=base_env()
        )
        if proc.returncode != 0:
            raise SourceError(
                phrase(
                    "downstream.fetch_failed", repo=self.repo, reason=proc.stderr.strip() or f"exit {proc.returncode}"
                )
            )
        # A mirror is only read by the bot: no reflogs, and no auto-gc while we measure its size.
        self._git("config", "core.logAllRefUpdates", "false")
        self._git("config", "gc.auto", "0")

    def _resolve(self, ref: str) -> str | None:
        proc = self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return (proc.stdout.strip() or None) if proc.returncode == 0 else None

    @contextmanager
    def _locked(self):
        with open(str(self.path) + ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _env(self, url: str) -> dict[str, str]:
        """The host's token (GITHUB_TOKEN, or GITLAB_TOKEN for a URL under GITLAB_URL), when there
        is one and the URL is https, as an HTTP header given in the environment (never on a command
        line another user could read)."""
        env = base_env()
        token, user = self.settings.github_token, "x-access-token"
        if url.startswith(self.settings.gitlab_url.rstrip("/") + "/"):
            token, user = self.settings.gitlab_token, "oauth2"  # GitLab: any user name, the token as password
        if token is not None and url.startswith("https://"):
            basic = base64.b64encode(f"{user}:{token.get_secret_value()}".encode()).decode()
            env.update(
                {
                    "GIT_CONFIG_COUNT": "1",
                    "GIT_CONFIG_KEY_0": "http.extraHeader",
                    "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
                }
            )
        return env

    def _too_large(self, source_repo: str) -> MirrorTooLarge:
        """Past the bound the mirror is removed whole: the disk is what the bound protects."""
        shutil.rmtree(self.path, ignore_errors=True)
        return MirrorTooLarge(
            phrase("downstream.mirror_too_large", repo=source_repo, mb=self.max_bytes // (1024 * 1024))
        )

    def _fetch(self, source_repo: str, branch: str | None, local_ref: str) -> None:
        objects = self.path / "objects"
        if _tree_bytes(objects) > self.max_bytes:
            raise self._too_large(source_repo)
        url = clone_url(self.settings, source_repo)
        remote_ref = f"refs/heads/{branch}" if branch else "HEAD"
        cmd = [
            "git",
            "--git-dir",
            str(self.path),
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--force",
            url,
            f"+{remote_ref}:{local_ref}",
        ]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self._env(url), start_new_session=True
        )  # its own group: killing it stops its helpers too
        started = time.monotonic()
        while True:
            try:
                proc.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                pass
            stopped: SourceError | None = None
            if time.monotonic() - started > self.timeout:
                stopped = SourceError(phrase("downstream.fetch_timeout", repo=source_repo, seconds=f"{self.timeout:g}"))
            elif _tree_bytes(objects) > self.max_bytes:
                stopped = MirrorTooLarge("")
            if stopped is not None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self._drop_partial_packs()
                raise self._too_large(source_repo) if isinstance(stopped, MirrorTooLarge) else stopped
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.returncode == 0:
            if _tree_bytes(objects) > self.max_bytes:  # a pack that landed between two polls
                raise self._too_large(source_repo)
            return
        self._drop_partial_packs()
        if _NO_REF.search(err):
            raise ForkNotFound(phrase("downstream.no_branch", branch=branch or "HEAD", fork=source_repo))
        if _NOT_FOUND.search(err):
            raise ForkNotFound(phrase("downstream.no_such_repo", repo=source_repo))
        last = err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}"
        raise SourceError(phrase("downstream.fetch_failed", repo=source_repo, reason=last))

    def _drop_partial_packs(self) -> None:
        pack = self.path / "objects" / "pack"
        for item in pack.glob("tmp_*") if pack.is_dir() else ():
            try:
                item.unlink()
            except OSError:
                pass
        for item in (self.path / "objects").glob("incoming-*"):
            shutil.rmtree(item, ignore_errors=True)
