"""A git URL as a name (pure: no I/O): `https://…`, `http://…`, `ssh://…`, `git://…` or scp-like
`git@host:path`, with any credentials typed into it taken out.

A URL typed as `https://user:token@host/…` is never kept with its credentials: the bot names it,
stores it, shows it and fetches it without them (the operator gives git its credentials through
a credential helper, ssh keys or GIT_CONFIG_* in the environment: docs/sources.md). So a token
typed into a chat cannot reach a message, a log line, a subscription, a cache key or a folder name,
and one person's token never opens a repository for everyone else who names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

_SCHEMES = ("http", "https", "ssh", "git")
# scp-like `[user@]host:path` (git's own rule: no slash before the first colon); the host has a dot
# or a user is named, so `gitlab:group/x` and `C:…` are not hosts; `::` (git's transport helpers,
# `ext::cmd`) never is.
_SCP = re.compile(r"^(?:(?P<user>[^@/\s]+)@)?(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*):(?!:)(?!//)(?P<path>[^\s]+)$")
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$")
_PATH = re.compile(r"^[A-Za-z0-9_.~+-][A-Za-z0-9_.~+/-]*$")
# Credentials inside any URL-ish text: `scheme://user:secret@` and scp's `user:secret@host:`.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")
_SCP_SECRET = re.compile(r"^([^@/:\s]+):[^@/\s]*@")


@dataclass(frozen=True)
class GitUrl:
    url: str  # the URL as git fetches it, without credentials (an ssh user name is kept)
    scheme: str  # http, https, ssh, git; "ssh" for the scp-like form
    host: str  # lower case, without a port
    port: str  # "" when none
    path: str  # group/project, without `.git` and slashes at the ends

    @property
    def name(self) -> str:
        """How a digest names the repository: its path on the host (`org/widgets`)."""
        return self.path

    @property
    def identity(self) -> str:
        """The same repository typed with or without `.git`, a trailing slash, credentials."""
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{self.host}{port}/{self.path}"

    @property
    def web_host(self) -> str:
        """The host of its web pages: an http(s) URL's port is the web server's, ssh's is not."""
        return f"{self.host}:{self.port}" if self.port and self.scheme in ("http", "https") else self.host

    @property
    def web_scheme(self) -> str:
        return self.scheme if self.scheme in ("http", "https") else "https"


def without_credentials(text: str) -> str:
    """`text` with any `user:secret@` of a URL in it taken out (for echoing what was typed)."""
    return _SCP_SECRET.sub(r"\1@", _USERINFO.sub(r"\1", text))


def parse_git_url(name: str) -> GitUrl | None:
    """The git URL `name` is, or None when it is none (a path, `owner/name`, anything else)."""
    name = (name or "").strip()
    if not name or any(c.isspace() for c in name):
        return None
    if "://" in name:
        parts = urlsplit(name)
        scheme = parts.scheme.lower()
        if scheme not in _SCHEMES or not parts.hostname or parts.query or parts.fragment:
            return None
        try:
            port = str(parts.port or "")
        except ValueError:
            return None
        path = parts.path.strip("/").removesuffix(".git").strip("/")
        host = parts.hostname.lower()
        if not path or not _HOST.match(host) or not _PATH.match(path) or ".." in path.split("/"):
            return None
        user = parts.username if scheme == "ssh" and parts.username else ""  # ssh's login, never a secret
        netloc = (f"{user}@" if user else "") + host + (f":{port}" if port else "")
        return GitUrl(urlunsplit((scheme, netloc, parts.path, "", "")), scheme, host, port, path)
    match = _SCP.match(name)
    if not match:
        return None
    user, host, raw_path = (match.group("user") or "").partition(":")[0], match.group("host"), match.group("path")
    path = raw_path.strip("/").removesuffix(".git").strip("/")
    if not (user or "." in host) or not path or not _PATH.match(path) or ".." in path.split("/"):
        return None
    return GitUrl(f"{user + '@' if user else ''}{host}:{raw_path}", "ssh", host.lower(), "", path)
