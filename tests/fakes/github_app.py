"""The GitHub App half of the fake GitHub (tests/fakes/github_server.py): what GitHub checks of an
app's JWT and its installation tokens.

    key = app.private_pem                      # generated now (cryptography); never committed
    with FakeGitHub() as gh:
        app = gh.enable_app(app_id="4242", slug="digest-bot")
        app.install("octo")                    # every repository of octo; install("acme", repos=["acme/one"])
        app.token_lifetime = 3600              # seconds an installation token lives (expires_at)
        app.clock_offset = 0.0                 # the fake's clock, ahead of ours by this many seconds
        app.tokens_issued                      # how many installation tokens it handed out

As GitHub does: a JWT must be RS256, signed with the app's key (checked with its public key),
`iss` the app id, `iat` not in the future and `exp` after now and at most 10 minutes after `iat`
(each failure a 401 with GitHub's message); `/app`, `/repos/{o}/{r}/installation` and
`/app/installations/{id}/access_tokens` take only a JWT; an installation token (random, long: no
length to rely on) is good until its `expires_at` (then 401 Bad credentials) and only for its
installation's repositories (others: 404, as GitHub hides what a token cannot see).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

DOCS = "https://docs.github.com/rest"


def new_private_pem() -> str:
    """A fresh RSA key as GitHub's .pem holds it (PKCS#1), made at test time."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()


@dataclass
class Installation:
    id: int
    account: str
    repos: list[str] | None  # None: all of the account's repositories


@dataclass
class Issued:
    installation: int
    expires_at: float


@dataclass
class FakeApp:
    app_id: str
    slug: str
    html_base: str
    private_pem: str = field(default_factory=new_private_pem)
    token_lifetime: float = 3600.0
    clock_offset: float = 0.0
    tokens_issued: int = 0
    installations: dict[int, Installation] = field(default_factory=dict)
    issued: dict[str, Issued] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1001))

    def __post_init__(self) -> None:
        self._public = serialization.load_pem_private_key(self.private_pem.encode(), None).public_key()

    def install(self, account: str, repos: list[str] | None = None) -> int:
        installation = Installation(next(self._ids), account, repos)  # a reinstall gets a new id
        self.installations[installation.id] = installation
        return installation.id

    def uninstall(self, account: str) -> None:
        for i in [i for i in self.installations.values() if i.account.lower() == account.lower()]:
            del self.installations[i.id]
            for token in [t for t, v in self.issued.items() if v.installation == i.id]:
                del self.issued[token]

    def now(self) -> float:
        return time.time() + self.clock_offset

    # --- what the server asks --------------------------------------------------------------------
    def is_jwt(self, token: str) -> bool:
        return token.count(".") == 2 and token.startswith("eyJ")

    def check_jwt(self, token: str) -> str | None:
        """None when GitHub would take this JWT, else GitHub's 401 message."""
        try:
            header = jwt.get_unverified_header(token)
            if header.get("alg") != "RS256":
                return "'Issuer' claim ('iss') must be an Integer"  # GitHub's answer to an unsigned token
            claims = jwt.decode(
                token, self._public, algorithms=["RS256"], options={"verify_exp": False, "verify_iat": False}
            )
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        now = self.now()
        iat, exp = claims.get("iat"), claims.get("exp")
        if str(claims.get("iss")) != self.app_id:
            return "'Issuer' claim ('iss') must be an Integer"
        if not isinstance(iat, int) or iat > now + 1:
            return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued."
        if not isinstance(exp, int) or exp <= now:
            return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires."
        if exp - iat > 600:
            return "'Expiration time' claim ('exp') is too far in the future"
        return None

    def installation_token(self, token: str) -> Issued | None:
        return self.issued.get(token)

    def covers(self, issued: Issued, repo: str) -> bool:
        installation = self.installations.get(issued.installation)
        return installation is not None and _covers(installation, repo)

    def answer(self, method: str, parts: list[str]) -> tuple[int, Any, dict[str, str]] | None:
        """The app's own endpoints (the JWT already checked); None: not one of them."""
        if method == "GET" and parts == ["app"]:
            return 200, self.app_json(), {}
        if method == "GET" and len(parts) == 4 and parts[0] == "repos" and parts[3] == "installation":
            repo = f"{parts[1]}/{parts[2]}"
            for installation in self.installations.values():
                if _covers(installation, repo):
                    return 200, self.installation_json(installation), {}
            return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}
        if (
            method == "POST"
            and len(parts) == 4
            and parts[:2] == ["app", "installations"]
            and parts[3] == "access_tokens"
        ):
            installation = self.installations.get(int(parts[2])) if parts[2].isdigit() else None
            if installation is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}
            token = "ghs_" + secrets.token_urlsafe(60)  # longer than the old 40 characters
            expires_at = self.now() + self.token_lifetime
            with self._lock:
                self.issued[token] = Issued(installation.id, expires_at)
                self.tokens_issued += 1
            return (
                201,
                {
                    "token": token,
                    "expires_at": _iso(expires_at),
                    "permissions": {"contents": "read"},
                    "repository_selection": "all" if installation.repos is None else "selected",
                },
                {},
            )
        return None

    def app_json(self) -> dict[str, Any]:
        return {
            "id": int(self.app_id) if self.app_id.isdigit() else 1,
            "slug": self.slug,
            "name": self.slug,
            "node_id": "A_kwDOfake",
            "owner": {"login": "octo", "id": 1, "type": "Organization"},
            "html_url": f"{self.html_base}/apps/{self.slug}",
            "permissions": {"contents": "read", "metadata": "read", "pull_requests": "read"},
            "events": ["push"],
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    def installation_json(self, installation: Installation) -> dict[str, Any]:
        return {
            "id": installation.id,
            "app_id": int(self.app_id) if self.app_id.isdigit() else 1,
            "app_slug": self.slug,
            "account": {"login": installation.account, "id": installation.id, "type": "Organization"},
            "repository_selection": "all" if installation.repos is None else "selected",
            "access_tokens_url": f"/app/installations/{installation.id}/access_tokens",
            "permissions": {"contents": "read", "metadata": "read", "pull_requests": "read"},
            "target_type": "Organization",
        }


def _covers(installation: Installation, repo: str) -> bool:
    owner = repo.split("/", 1)[0]
    if owner.lower() != installation.account.lower():
        return False
    return installation.repos is None or repo.lower() in {r.lower() for r in installation.repos}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
