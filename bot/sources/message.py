"""Commit-message hygiene shared by every source: title/body split, trailers and e-mail
addresses removed (the reference reports pasted `Signed-off-by: … <mail>` above analyses),
PR number and reverted SHA extracted.
"""

from __future__ import annotations

import re
from typing import Any

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(?:-[Bb]y|-[Tt]o)?\s*:\s+\S")
_KNOWN_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|co-developed-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"suggested-by|cc|change-id|reviewed-on|helped-by|approved-by|ghstack-source-id|"
    r"pull request resolved|differential revision)\s*:",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"<?[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}>?")
# The PR a squash merge names at the end of its title; else the first one it names. A revert's
# title quotes the reverted one's: `Revert "Add a flag (#901)" (#905)` is PR 905.
_PR_AT_END = re.compile(r"\(#(\d+)\)\s*$")
_PR_IN_TITLE = re.compile(r"\(#(\d+)\)")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)


def email_user(address: str | None) -> str:
    """The user part of an e-mail address, the author's login when there is no account:
    GitHub's noreply `12345+octocat@users.noreply.github.com` is `octocat`. "" for none."""
    user, at, _host = (address or "").strip().strip("<>").rpartition("@")
    return re.sub(r"^\d+\+", "", user) if at else ""


def strip_emails(text: str) -> str:
    return re.sub(r"[ \t]{2,}", " ", _EMAIL.sub("", text)).strip()


def _is_trailer_block(lines: list[str]) -> bool:
    """git's rule, simplified: the last paragraph is a trailer block when every line is a
    `Key: value` line and at least one is a trailer git itself would recognise."""
    lines = [ln for ln in lines if ln.strip()]
    return bool(lines) and all(_TRAILER.match(ln) for ln in lines) and any(_KNOWN_TRAILER.match(ln) for ln in lines)


def split_message(message: str) -> tuple[str, str, int | None, str | None]:
    """(title, body, pr_number, reverted_sha) from a raw commit message."""
    message = (message or "").replace("\r\n", "\n").strip()
    title, _, body = message.partition("\n")
    title = strip_emails(title.strip()) or "(no commit message)"
    paragraphs = re.split(r"\n\s*\n", body.strip()) if body.strip() else []
    while paragraphs and _is_trailer_block(paragraphs[-1].splitlines()):
        paragraphs.pop()
    # Stray trailer lines inside the body (squash merges glue them anywhere) go too.
    kept = [ln for p in paragraphs for ln in (p.splitlines() + [""]) if not _KNOWN_TRAILER.match(ln.strip())]
    body = strip_emails_lines("\n".join(kept).strip())
    match = _PR_AT_END.search(title) or _PR_IN_TITLE.search(title)
    pr_number = int(match.group(1)) if match else None
    reverted = _REVERTS.search(message)
    return title, body, pr_number, reverted.group(1) if reverted else None


def strip_emails_lines(text: str) -> str:
    return "\n".join(strip_emails(ln) if _EMAIL.search(ln) else ln for ln in text.splitlines())


def pr_context(labels: list[str], issues: list[tuple[Any, str]]) -> str:
    """'Labels: bug, security' / 'Linked issues: #41 Crash on …' lines put before a PR's body (the
    same request brings them; the prompt shows them as part of the untrusted PR text)."""
    lines = []
    names = [n for n in labels if n]
    if names:
        lines.append("Labels: " + ", ".join(names))
    linked = [f"#{n} {t}".strip() for n, t in issues if n]
    if linked:
        lines.append("Linked issues: " + "; ".join(linked))
    return "\n".join(lines) + "\n\n" if lines else ""


_VERSION_IN_TAG = re.compile(r"v?\d+(?:\.\d+)+")


def release_text(tag: str, body: str) -> str:
    """A release's body as a changelog's section: under its version when the tag carries one
    (`vllm-v0.5.1` → `## v0.5.1`), so its entries read as released; the body alone otherwise."""
    version = _VERSION_IN_TAG.search(tag)
    return f"## {version.group(0)}\n\n{body}" if version else body
