"""`Reports`: publish a digest (→ its signed link) and answer a request for a report page.

Nothing here speaks HTTP: `respond` returns a status, a body and the headers, and handlers/web.py
sends them. Every refusal looks the same whatever its cause (tampered, expired, unknown id), so
a visitor learns nothing about which reports exist; there is no listing and no unsigned route.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from settings import Settings

from ..core.models import BotError, Digest, Importance
from ..digest.kept import Kept, report_place
from ..i18n import browser_language, text
from ..levels.overlay import correct, overlay
from ..render import labels as L
from ..render.changelog import render_changelog
from ..taste.corrections import DIRECTIONS, TOO_HIGH, nudge
from . import archive
from .signing import new_nonce, new_report_id, sign, sign_tap, signing_key, verify, verify_tap

log = logging.getLogger(__name__)

# No script may run (script-src falls back to 'none'), nothing is fetched, the page cannot be
# framed, and neither the browser nor a proxy keeps a copy of a private repository's report.
HEADERS = {
    "Content-Security-Policy": (
        # form-action 'self': each commit's level-correction form posts back to its own page
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
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
    content_type: str = "text/html"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def download_name(digest: Digest) -> str:
    """`owner-name-2026-01-28-changelog.md`: ASCII only, so no header quoting or encoding is needed."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{digest.repo}-{digest.window.label}").strip("-.") or "digest"
    return f"{stem[:120]}-changelog.md"


def _changelog_download(digest: Digest) -> Response:
    """The release notes of a page's digest (bot/render/changelog.py), as a file to save."""
    headers = dict(HEADERS)
    headers["Content-Disposition"] = f'attachment; filename="{download_name(digest)}"'
    return Response(200, render_changelog(digest), headers, content_type="text/markdown")


class Reports:
    def __init__(self, store, settings: Settings, clock: Callable[[], datetime] = _utcnow, corrections=None):
        self.store = store
        self.settings = settings
        self.clock = clock
        self.corrections = corrections  # readers' level corrections: shown, and made from the page

    @property
    def enabled(self) -> bool:
        return bool(self.settings.public_base_url)

    async def publish(self, digest: Digest, scope: str = "") -> str | None:
        """Keep `digest` for REPORT_LINK_TTL and return its signed link; None when PUBLIC_BASE_URL
        is unset or the digest is empty (an empty day's message has no report). `scope`: the
        workspace scope of the conversation it is published for (bot/core/tenants.py's
        `scope_of`): the page's corrections are that workspace's and the shared ones."""
        base = self.settings.public_base_url
        if not base or not digest.entries:
            return None
        ttl = self.settings.report_link_ttl
        report_id = new_report_id()
        exp = int(self.clock().timestamp()) + ttl
        await archive.keep_scope(self.store, report_id, scope, ttl)  # before the page exists
        await archive.keep(self.store, report_id, digest, ttl)
        await Kept(self.store).shown(digest, report_place(report_id))  # improved in place later
        key = await signing_key(self.store, self.settings.report_signing_key)
        return f"{base.rstrip('/')}/r/{report_id}?exp={exp}&sig={sign(key, report_id, exp)}"

    async def respond(
        self,
        report_id: str,
        exp: str,
        sig: str,
        accept_language: str = "",
        form: dict[str, str] | None = None,
        changelog: bool = False,
    ) -> Response:
        """The page for a link's three parts, or a refusal: 403 for a link that is not ours or has
        expired, 404 for a good link whose report is gone, 503 while Redis is unreachable.
        `form`: a level-correction form posted from the page (the page then says what became of it
        in one sentence above the report; 400 for a form the page did not draw).
        `changelog`: the page's download instead, its release notes as a Markdown file (the same
        link signs both: whoever may read the page may take its notes)."""
        from .page import render_page, render_refusal

        lang = browser_language(accept_language, self.settings.default_lang)  # (a refused link has no digest's)
        try:
            key = await signing_key(self.store, self.settings.report_signing_key)
            if not verify(key, report_id, exp, sig, self.clock().timestamp()):
                return Response(403, render_refusal(lang, 403))
            digest = await archive.load(self.store, report_id)
            scope = await archive.scope(self.store, report_id) if digest is not None else ""
            status, said = 200, ""
            if digest is not None and form is not None:
                status, said = await self._tap(key, report_id, exp, digest, form, scope)
            if digest is not None and self.corrections is not None:
                digest = overlay(digest, await self.corrections.effective(digest.repo, scope))
        except BotError as exc:
            log.warning("report page: %s", exc)
            return Response(503, render_refusal(lang, 503))
        if digest is None:
            return Response(404, render_refusal(lang, 404))
        if changelog:
            return _changelog_download(digest)
        taps = self._forms(key, report_id, int(exp), digest) if self.corrections is not None else None
        # A 300-commit page takes tens of milliseconds to draw: off the loop that acknowledges
        # Slack's and Feishu's callbacks.
        download = (
            f"{report_id}/changelog.md?exp={exp}&sig={sig}"  # relative: a PUBLIC_BASE_URL path prefix keeps working
        )
        return Response(status, await asyncio.to_thread(render_page, digest, int(exp), taps, said, download))

    def _forms(self, key: bytes, report_id: str, exp: int, digest: Digest) -> dict[str, dict[str, str]]:
        """sha → the hidden fields of its level-correction form (a fresh nonce each time drawn)."""
        forms = {}
        for e in digest.entries:
            nonce = new_nonce()
            forms[e.commit.sha] = {
                "sha": e.commit.sha,
                "nonce": nonce,
                "mac": sign_tap(key, report_id, exp, e.commit.sha, nonce),
            }
        return forms

    async def _tap(
        self, key: bytes, report_id: str, exp: str, digest: Digest, form: dict[str, str], scope: str
    ) -> tuple[int, str]:
        """Record a level tap from the page, in the page's workspace scope: (status, the sentence
        the page shows)."""
        lang = digest.lang
        sha, nonce, direction = form.get("sha", ""), form.get("nonce", ""), form.get("dir", "")
        if not verify_tap(key, report_id, exp, sha, nonce, form.get("mac", "")):
            return 400, text(lang, "levels.page_forged")
        if direction not in DIRECTIONS:
            return 400, text(lang, "levels.bad_direction")
        entry = next((e for e in digest.entries if e.commit.sha == sha), None)
        if entry is None or entry.analysis is None or self.corrections is None:
            return 400, text(lang, "levels.unknown_commit", sha=sha[:12])
        ttl = max(60, int(exp) - int(self.clock().timestamp()))
        if not await self.store.claim(self.store.k("report", "tap", nonce), ttl):
            return 200, text(lang, "levels.page_repeat")  # the browser sent the form again (a reload)
        now = correct(entry, (await self.corrections.effective(digest.repo, scope)).get(sha), digest.lang).importance
        level = nudge(now.value, direction)
        if level is None:
            way = "levels.lowest" if direction == TOO_HIGH else "levels.highest"
            return 200, text(lang, way, sha=entry.commit.short_sha, level=L.importance_label(lang, now))
        kept = await self.corrections.record(digest.repo, sha, level, L.PAGE_READER, at=self.clock(), scope=scope)
        level_label = L.importance_label(lang, Importance(kept.level))
        return 200, text(
            lang, "levels.recorded", sha=entry.commit.short_sha, title=entry.commit.title, level=level_label
        )
