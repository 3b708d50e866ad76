"""Bare mirrors the bot keeps under DATA_DIR, fetched by `git fetch` within bounds: the machinery
fork mirrors (bot/fork/mirror.py) and the mirror-backed "any git URL" source (mirrored.py) share.

A fetch is bounded:

- in time: `timeout` seconds, then git (and its helpers: its own process group) is killed;
- in size: `max_bytes` for the mirror's object store, watched while git downloads (its temporary
  pack grows on disk; `fetch.unpackLimit=1` keeps even a few huge objects in that one pack) — the
  fetch is killed at the bound, its partial pack dropped and the mirror removed whole (the disk is
  what the bound protects; the refs never pointed at what was dropped, so nothing half-written is
  ever read);
- in frequency: a fetch is skipped when the last one *started* late enough for what the caller
  needs (`needed`, a Unix time: the end of a digest's window, or now), give or take `interval`.

Processes that share the data directory share a mirror: a fetch holds an exclusive lock on the
file beside it (flock: held by exactly the processes that see this disk, released by the kernel
when one dies, so no lease to expire or renew). Whoever waited for it then sees the stamp of the
fetch that just ran: when that fetch started after the moment it needed, it uses the fresh mirror
instead of fetching again — many channels' digests of the same repository, one fetch.

The sentences are the caller's (`MirrorWords`): a fork's name its own settings, a URL mirror its.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.models import NotFoundError, SourceError
from ..i18n import phrase

POLL_SECONDS = 0.2
# Variables a caller's shell may set that would point git at another repository or index.
_INHERITED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)
_NOT_FOUND = re.compile(
    r"repository .* not found|does not appear to be a git repository|"
    r"not found|could not read from remote repository|could not read username|authentication failed",
    re.I,
)
_NO_REF = re.compile(r"couldn't find remote ref", re.I)


def base_env() -> dict[str, str]:
    """The environment git runs in: the process's (so the operator's credential helpers, ssh keys
    and GIT_CONFIG_* apply), never a prompt, never another repository's variables."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    return env


class MirrorTooLarge(SourceError):
    """The mirror would grow past its bound."""


class MirrorNotFound(NotFoundError):
    """The remote repository, or the branch asked for, is not there (or not visible)."""


@dataclass(frozen=True)
class MirrorWords:
    """The catalogue keys of a mirror's sentences. Each takes {repo}; `timeout` {seconds},
    `too_large` {mb}, `no_branch` {branch} and {fork}, `failed` {reason}."""

    failed: str = "downstream.fetch_failed"
    timeout: str = "downstream.fetch_timeout"
    too_large: str = "downstream.mirror_too_large"
    no_branch: str = "downstream.no_branch"
    no_repo: str = "downstream.no_such_repo"


def tree_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass  # a temporary file git just renamed or removed
    return total


class BareMirror:
    """One bare repository at `path`, shown to readers as `name` (never a URL with credentials)."""

    def __init__(
        self,
        path: Path,
        name: str,
        *,
        timeout: float,
        max_bytes: int,
        interval: float,
        words: MirrorWords = MirrorWords(),
        env: Callable[[str], dict[str, str]] | None = None,
    ):
        self.path = Path(path)
        self.name = name
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.interval = interval
        self.words = words
        self._env = env or (lambda url: base_env())

    @property
    def git_dir(self) -> str:
        return str(self.path)

    # --- public ---------------------------------------------------------------------------------
    def init(self) -> None:
        """The bare repository, created empty if it is not there (no network)."""
        if (self.path / "HEAD").exists():
            return
        with self.locked():  # two processes opening a new mirror at once: one creates it
            if (self.path / "HEAD").exists():
                return
            proc = subprocess.run(  # no template: a mirror needs no hooks or sample files
                ["git", "init", "--bare", "-q", "--template=", str(self.path)],
                capture_output=True,
                text=True,
                env=base_env(),
            )
            if proc.returncode != 0:
                reason = _last(proc.stderr, proc.returncode)
                raise SourceError(phrase(self.words.failed, repo=self.name, reason=reason))
            # Only read by the bot: no reflogs, no auto-gc while its size is measured, every
            # download into one pack (whose growth the size bound watches).
            for key, value in (("core.logAllRefUpdates", "false"), ("gc.auto", "0"), ("fetch.unpackLimit", "1")):
                self.git("config", key, value)

    def fetch(
        self,
        url: str,
        refspecs: Sequence[str],
        *,
        key: str,
        needed: float | None = None,
        force: bool = False,
        ready: Callable[[], bool] = lambda: True,
        branch: str | None = None,
        name: str | None = None,
        after: Callable[[], None] = lambda: None,
    ) -> bool:
        """Fetch `refspecs` from `url` unless the last fetch of `key` started at or after `needed`
        (default: now) less `interval` and `ready()` holds. Returns whether it fetched. Waits its
        turn on the mirror's lock; `force`: fetch even when fresh. `name`: the remote repository as
        sentences name it (default: the mirror's); `after`: run under the lock once fetched (what
        readers of a fresh mirror rely on, such as its HEAD)."""
        self.init()
        asked = time.time()  # before waiting our turn: a fetch that started while we waited counts
        with self.locked():
            stamp = self.path / "digest-bot-fetched" / hashlib.sha1(key.encode()).hexdigest()
            since = min(needed if needed is not None else asked, asked) - self.interval
            if not force and stamp.exists() and stamp.stat().st_mtime >= since and ready():
                return False
            started = time.time()
            self._fetch(url, refspecs, branch, name or self.name)
            after()
            stamp.parent.mkdir(exist_ok=True)
            stamp.touch()
            os.utime(stamp, (started, started))  # what it holds: everything pushed before it started
            return True

    def last_fetch(self, key: str) -> float | None:
        stamp = self.path / "digest-bot-fetched" / hashlib.sha1(key.encode()).hexdigest()
        return stamp.stat().st_mtime if stamp.exists() else None

    def resolve(self, ref: str) -> str | None:
        proc = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return (proc.stdout.strip() or None) if proc.returncode == 0 else None

    def git(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["git", "--git-dir", str(self.path), *args], capture_output=True, text=True, env=base_env(), timeout=timeout
        )

    def run_bounded(self, cmd: list[str], url: str) -> tuple[int, str]:
        """Run a git command that talks to `url` within the time bound: (exit code, stderr)."""
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env(url), start_new_session=True
        )  # its own group: killing it stops its helpers too
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise SourceError(phrase(self.words.timeout, repo=self.name, seconds=f"{self.timeout:g}")) from None
        return proc.returncode, out.decode("utf-8", "replace") + "\0" + err.decode("utf-8", "replace")

    @contextmanager
    def locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(self.path) + ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # --- internals ------------------------------------------------------------------------------
    def _too_large(self, name: str) -> MirrorTooLarge:
        """Past the bound the mirror is removed whole: the disk is what the bound protects."""
        shutil.rmtree(self.path, ignore_errors=True)
        return MirrorTooLarge(phrase(self.words.too_large, repo=name, mb=self.max_bytes // (1024 * 1024)))

    def _fetch(self, url: str, refspecs: Sequence[str], branch: str | None, name: str) -> None:
        objects = self.path / "objects"
        if tree_bytes(objects) > self.max_bytes:
            raise self._too_large(name)
        cmd = ["git", "--git-dir", str(self.path), "fetch", "--quiet", "--no-tags", "--no-write-fetch-head"]
        cmd += ["--no-auto-gc", "--force", url, *refspecs]
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
                stopped = SourceError(phrase(self.words.timeout, repo=name, seconds=f"{self.timeout:g}"))
            elif tree_bytes(objects) > self.max_bytes:
                stopped = MirrorTooLarge("")
            if stopped is not None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self._drop_partial_packs()
                raise self._too_large(name) if isinstance(stopped, MirrorTooLarge) else stopped
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.returncode == 0:
            if tree_bytes(objects) > self.max_bytes:  # a pack that landed between two polls
                raise self._too_large(name)
            return
        self._drop_partial_packs()
        if _NO_REF.search(err):
            raise MirrorNotFound(phrase(self.words.no_branch, branch=branch or "HEAD", fork=name))
        if _NOT_FOUND.search(err):
            raise MirrorNotFound(phrase(self.words.no_repo, repo=name))
        raise SourceError(phrase(self.words.failed, repo=name, reason=_last(err, proc.returncode)))

    def _drop_partial_packs(self) -> None:
        pack = self.path / "objects" / "pack"
        for item in pack.glob("tmp_*") if pack.is_dir() else ():
            try:
                item.unlink()
            except OSError:
                pass
        for item in (self.path / "objects").glob("incoming-*"):
            shutil.rmtree(item, ignore_errors=True)


def _last(err: str, code: int) -> str:
    lines = err.strip().splitlines()
    return lines[-1] if lines else f"exit {code}"
