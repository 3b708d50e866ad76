"""`Reports`: publish a digest (→ its signed link) and answer a request for a report page.

Nothing here speaks HTTP: `respond` returns a status, a body and the headers, and handlers/web.py
sends them. Every refusal looks the same whatever its cause (tampered, expired, unknown id), so
a visitor learns nothing about which reports exist; there is no listing and no unsigned route.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..models import BotError, Digest
from . import archive
from .signing import new_report_id, sign, signing_key, verify

log = logging.getLogger(__name__)

# No script may run (script-src falls back to 'none'), nothing is fetched, the page cannot be
# framed, and neither the browser nor a proxy keeps a copy of a private repository's report.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the signed URL never leaks to the sites it links to
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex, nofollow",
}


@dataclass(frozen=True)
class Response:
    status: int
    body: str
    headers: dict = field(default_factory=lambda: dict(HEADERS))


def _utcnow() -> datetime:
    return datetime.now(UTC)


def language_of(accept_language: str, default: str) -> str:
    """The visitor's language for a refusal (a refused link carries no digest to take it from)."""
    for part in accept_language.split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return "zh"
        if tag.startswith("en"):
            return "en"
    return default


class Reports:
    def __init__(self, store, settings, clock: Callable[[], datetime] = _utcnow):
        self.store = store
        self.settings = settings
        self.clock = clock

    @property
    def enabled(self) -> bool:
        return bool(self.settings.public_base_url)

    async def publish(self, digest: Digest) -> str | None:
        """Keep `digest` for REPORT_LINK_TTL and return its signed link; None when PUBLIC_BASE_URL
        is unset or the digest is empty (an empty day's message has no report)."""
        if not self.enabled or not digest.entries:
            return None
        ttl = self.settings.report_link_ttl
        report_id = new_report_id()
        exp = int(self.clock().timestamp()) + ttl
        await archive.keep(self.store, report_id, digest, ttl)
        key = await signing_key(self.store, self.settings.report_signing_key)
        base = self.settings.public_base_url.rstrip("/")
        return f"{base}/r/{report_id}?exp={exp}&sig={sign(key, report_id, exp)}"

    async def respond(self, report_id: str, exp: str, sig: str, accept_language: str = "") -> Response:
        """The page for a link's three parts, or a refusal: 403 for a link that is not ours or has
        expired, 404 for a good link whose report is gone, 503 while Redis is unreachable."""
        from .page import render_page, render_refusal

        lang = language_of(accept_language, self.settings.default_lang)
        try:
            key = await signing_key(self.store, self.settings.report_signing_key)
            if not verify(key, report_id, exp, sig, self.clock().timestamp()):
                return Response(403, render_refusal(lang, 403))
            digest = await archive.load(self.store, report_id)
        except BotError as exc:
            log.warning("report page: %s", exc)
            return Response(503, render_refusal(lang, 503))
        if digest is None:
            return Response(404, render_refusal(lang, 404))
        # A 300-commit page takes tens of milliseconds to draw: off the loop that acknowledges
        # Slack's and Feishu's callbacks.
        return Response(200, await asyncio.to_thread(render_page, digest, int(exp)))
