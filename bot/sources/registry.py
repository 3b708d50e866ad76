"""The commit sources, as a registry: how a user names a repository, and which source opens it.

Each host is one module (its `CommitSource`) plus one `SourceEntry` in `SOURCES` below
(pr-agent's `_GIT_PROVIDERS` is the shape). An entry says:

- `parse`: whether a name is this host's, and the repository it names there (`owner/name`, a
  GitLab project's path, an absolute path …); None when it is not;
- `opens`: the class of its sources, `module:Class` under bot/sources, imported only when one is
  opened (`open`). A name, not an import: the registry is read by everything that names a
  repository (the chat's policy, fork names, mirrors), and those must not pull in every host's
  module and SDK — only opening a source does (opened.py, the source cache, is where that happens);
- `form`: how the name is typed, for the one sentence a name matching nothing gets;
- `remote`: chat users may name it (only the operator's terminal may name paths on this machine);
- `clone_url`: where `git fetch` finds it, for the mirrors forks are read from (None: not fetched);
- `links`: how the host links a commit, a pull/merge request, a file, a compare view
  (bot/core/links.py);
- `git_token`: where a token `git fetch` sends for one repository comes from, when it is not
  the host's one setting (a GitHub App's installation token: `module:function`, imported when
  asked, like `opens`).

The first entry whose `parse` accepts a name wins: an existing path before anything else (as
`--repo` always did), then `gitlab:…` and URLs under GITLAB_URL, then GitHub's `owner/name`. Any
other git URL (`https://…`, `ssh://…`, `git@…`) is a mirror-backed source's to take: it goes last,
as one more entry (`url`, bot/sources/mirrored.py: a bare mirror the bot keeps), whose names are
the URL without credentials (`keeps_typed` False: a token typed into a URL is never kept).

Adding a host: write its source module, then append its entry here (or, in a test, `register` it).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from settings import Settings

from ..core.links import GITHUB_LINKS, GITLAB_LINKS, NO_LINKS, LinkStyle
from ..core.models import UsageError
from ..i18n import echo, is_zh, phrase, text
from .giturl import parse_git_url, without_credentials


@dataclass(frozen=True)
class SourceEntry:
    kind: str  # "git", "gitlab", "github": the prefix of its sources' cache_id
    form: str  # the catalogue key of how its names are typed (sources.form_*)
    parse: Callable[[str, Settings | None], str | None]  # None: the settings' defaults (a pure grammar check)
    opens: str | Callable[[str, Settings], Any]  # "localgit:LocalGitSource", or (a test) the class
    remote: bool = True
    clone_url: Callable[[str, Settings], str] | None = None
    links: LinkStyle = GITHUB_LINKS
    prefix: str = ""  # the name's prefix when the kind must be said (`gitlab:`), else ""
    keeps_typed: bool = True  # commands reuse the name as typed; False: its spec (credentials out)
    git_token: str | None = None  # "github.installations:git_token": async (where, settings) -> token | None

    async def token_for_git(self, where: str, settings: Settings) -> str | None:
        """The token `git fetch` of repository `where` sends, when this host has one per repository."""
        if self.git_token is None:
            return None
        module, _, function = self.git_token.partition(":")
        return await getattr(importlib.import_module(f"{__package__}.{module}"), function)(where, settings)

    def open(self, where: str, settings: Settings) -> Any:  # a CommitSource (not imported: see `opens`)
        """The source of repository `where` (its module imported now, once)."""
        opens = self.opens
        if isinstance(opens, str):
            module, _, cls = opens.partition(":")
            opens = getattr(importlib.import_module(f"{__package__}.{module}"), cls)
        return opens(where, settings)

    def spec(self, where: str) -> str:
        """How commands, buttons and subscriptions name this repository: short and unambiguous."""
        return f"{self.prefix}{where}" if self.prefix else where


@dataclass(frozen=True)
class Named:
    """A repository as the registry understood its name."""

    entry: SourceEntry
    where: str  # what the entry opens: a path, owner/name, a GitLab project's path

    @property
    def kind(self) -> str:
        return self.entry.kind

    @property
    def spec(self) -> str:
        return self.entry.spec(self.where)


# --- the built-in hosts' names ---------------------------------------------------------------------


def _local_path(name: str, settings: Settings | None) -> str | None:
    path = os.path.expanduser(name)
    return path if os.path.exists(path) else None


def _github_web_host(settings: Settings | None) -> str:
    """github.com for the public API, the Enterprise server's host for https://HOST/api/v3."""
    api = settings.github_api_url if settings is not None else "https://api.github.com"
    host = urlsplit(api).netloc.rpartition("@")[2]
    return "github.com" if host == "api.github.com" else host


def _github_name(name: str, settings: Settings | None) -> str | None:
    if GITHUB_NAME.match(name) and not name.startswith((".", "/", "~")):
        return name
    parts = urlsplit(name)
    if parts.scheme in ("http", "https") and parts.netloc.rpartition("@")[2] == _github_web_host(settings):
        path = parts.path.strip("/").removesuffix(".git")
        owner_name = "/".join(path.split("/")[:2])
        return owner_name if GITHUB_NAME.match(owner_name) else None
    return None


def _github_clone_url(where: str, settings: Settings) -> str:
    """FORK_GIT_URL's template, else the web host of GITHUB_API_URL (https://github.com/{repo}.git)."""
    if settings.fork_git_url:
        return settings.fork_git_url.replace("{repo}", where)
    parts = urlsplit(settings.github_api_url.rstrip("/"))
    host = "github.com" if parts.netloc == "api.github.com" else parts.netloc
    return f"{parts.scheme}://{host}/{where}.git"


# GitHub's `owner/name` (an owner is at most 39 letters, digits and dashes)
GITHUB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
GITLAB_COM = "https://gitlab.com"  # GITLAB_URL's default

# A GitLab project's path: a group, its subgroups, the project (GitLab allows letters, digits,
# `_`, `.`, `-`, `+` in a path, not starting with `-` or `.`, and reserves `/-/` for its pages).
_GITLAB_PATH = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.+-]*/)+[A-Za-z0-9_][A-Za-z0-9_.+-]*$")


def _gitlab_name(name: str, settings: Settings | None) -> str | None:
    if name[:7].lower() == "gitlab:":
        path = name[7:].strip().strip("/").removesuffix(".git")
        return path if _GITLAB_PATH.match(path) else None
    parts, base = urlsplit(name), urlsplit((settings.gitlab_url if settings is not None else GITLAB_COM).rstrip("/"))
    if parts.scheme not in ("http", "https") or parts.netloc.rpartition("@")[2].lower() != base.netloc.lower():
        return None
    path = parts.path
    if base.path and base.path != "/":  # GitLab served under a relative URL (https://HOST/gitlab)
        if not path.startswith(base.path.rstrip("/") + "/"):
            return None
        path = path[len(base.path.rstrip("/")) :]
    path = path.split("/-/", 1)[0].strip("/").removesuffix(".git")  # …/-/merge_requests/4 → the project
    return path if _GITLAB_PATH.match(path) else None


def _gitlab_clone_url(where: str, settings: Settings) -> str:
    return f"{settings.gitlab_url.rstrip('/')}/{where}.git"


def github_clone_prefix(settings: Settings) -> str:
    """What every GitHub clone URL starts with (where GITHUB_TOKEN may be sent, and nowhere else)."""
    return _github_clone_url("\0", settings).partition("\0")[0]


def _git_url(name: str, settings: Settings | None) -> str | None:
    """Any other git URL: the URL without its credentials (bot/sources/giturl.py)."""
    url = parse_git_url(name)
    return url.url if url is not None else None


def _git_url_clone(where: str, settings: Settings) -> str:
    return where


SOURCES: list[SourceEntry] = [
    SourceEntry("git", "sources.form_path", _local_path, "localgit:LocalGitSource", remote=False),
    SourceEntry(
        "gitlab",
        "sources.form_gitlab",
        _gitlab_name,
        "gitlab.source:GitLabSource",
        clone_url=_gitlab_clone_url,
        links=GITLAB_LINKS,
        prefix="gitlab:",
    ),
    SourceEntry(
        "github",
        "sources.form_github",
        _github_name,
        "github.source:GitHubSource",
        clone_url=_github_clone_url,
        git_token="github.installations:git_token",
    ),
    # any other git URL, through a mirror the bot keeps (its links: per host, core/links.host_links)
    SourceEntry(
        "url",
        "sources.form_url",
        _git_url,
        "mirrored:MirroredSource",
        clone_url=_git_url_clone,
        links=NO_LINKS,
        keeps_typed=False,
    ),
]


def register(entry: SourceEntry, *, before: str | None = None) -> None:
    """Add a host (a plug-in, a test): last, or just before the entry of kind `before`."""
    kinds = [e.kind for e in SOURCES]
    if entry.kind in kinds:
        raise ValueError(f"a source of kind {entry.kind!r} is registered already")
    SOURCES.insert(kinds.index(before) if before in kinds else len(SOURCES), entry)


def unregister(kind: str) -> None:
    SOURCES[:] = [e for e in SOURCES if e.kind != kind]


@contextmanager
def registered(entry: SourceEntry, *, before: str | None = None) -> Iterator[SourceEntry]:
    register(entry, before=before)
    try:
        yield entry
    finally:
        unregister(entry.kind)


def accepted_forms(lang: str | None) -> str:
    return ("、" if is_zh(lang or "zh") else ", ").join(text(lang, e.form) for e in SOURCES)


def find(name: str, settings: Settings | None) -> Named | None:
    """The first entry that takes `name`, or None."""
    name = (name or "").strip()
    for entry in SOURCES:
        where = entry.parse(name, settings) if name else None
        if where:
            return Named(entry, where)
    return None


def parse_repo(name: str, settings: Settings) -> Named:
    """The repository `name` names; UsageError, one sentence listing the accepted forms, when none."""
    name = (name or "").strip()
    if not name:
        raise UsageError(phrase("errors.no_repo_given"))
    found = find(name, settings)
    if found is None:
        raise UsageError(phrase("errors.not_a_repo_or_path", value=echo(without_credentials(name)), forms=FormsList()))
    return found


class FormsList:
    """The accepted forms, said in the reader's language when the phrase is (bot.i18n calls
    `say` on a field that has one)."""

    def say(self, lang: str | None) -> str:
        return accepted_forms(lang or "zh")


def by_kind(kind: str) -> SourceEntry | None:
    return next((e for e in SOURCES if e.kind == kind), None)


def clone_url(spec: str, settings: Settings) -> str:
    """Where `git fetch` finds the repository `spec` names (a fork's mirror); UsageError when
    its host is not fetched by git."""
    named = parse_repo(spec, settings)
    if named.entry.clone_url is None:
        raise UsageError(phrase("errors.not_a_repo_or_path", value=echo(without_credentials(spec)), forms=FormsList()))
    return named.entry.clone_url(named.where, settings)


def fetch_spec(source: Any) -> str:
    """How a mirror names an opened remote source: its kind's spec of its own spelling
    (`owner/name` for GitHub, `gitlab:group/project` for GitLab)."""
    kind = source.cache_id.partition(":")[0]
    entry = by_kind(kind)
    return entry.spec(source.name) if entry is not None else source.name
