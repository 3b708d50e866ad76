"""Security: the facts, risks and insights that follow from a fix claimed (CVE ids, "XSS", "path
traversal") or security only mentioned, a change on a trust boundary (md5, reserved names,
symlinks, credentials), input newly refused, security-sensitive paths (auth/, crypto/), and
hardening of the release pipeline. The message's words are read in words.py (parse_title puts
them in `TitleInfo`); the paths and patches here.

Words are read as the author's words: a file name, a path or an identifier that contains one
(security.py, Swatinem/rust-cache, prohibit_none_typevar_overlap) says nothing. That input is
refused on a trust boundary — the one high here that a one-line diff can earn — takes the check
itself in the diff (patch.new_refusals), not a word in the message, a comment or a string.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....core.models import ChangeType, Importance
from ....i18n import Phrase, phrase
from ..context import Context, Fact, Insight, Risk
from ..lang import Names, clip
from ..patch import new_refusals
from ..paths import PROSE_EXT, FileKind, extension
from ..stats import WhereNames, runtime_lines

if TYPE_CHECKING:
    from ...profile import RepoProfile
    from ..stats import FileStats
    from ..title import TitleInfo

_SECURITY_TOKENS = frozenset(
    {
        "auth",
        "authn",
        "authz",
        "authentication",
        "authorization",
        "oauth",
        "oauth2",
        "oidc",
        "saml",
        "crypto",
        "cryptography",
        "ssl",
        "tls",
        "jwt",
        "password",
        "passwords",
        "secret",
        "secrets",
        "permission",
        "permissions",
        "sandbox",
        "csrf",
        "security",
        "acl",
        "rbac",
        "cert",
        "certs",
        "certificate",
        "certificates",
        "keyring",
        "credentials",
        "login",
        "sanitize",
        "sanitizer",
    }
)
_RELEASE_PIPELINE = re.compile(r"(release|publish|deploy|dist|build-binar)", re.I)


# --- reading the files ---------------------------------------------------------------------------


def sensitive_paths(stats: FileStats, profile: RepoProfile) -> list[str]:
    """Shipped source, config and build files under auth/, crypto/, tls/ … (by path name)."""
    runtime = [
        (f, k)
        for f, k in stats.files
        if k in (FileKind.SOURCE, FileKind.CONFIG, FileKind.BUILD) and not profile.is_internal(f.path)
    ]
    return [f.path for f, _ in runtime if set(re.split(r"[/._-]", f.path.lower())) & _SECURITY_TOKENS]


def refusals(stats: FileStats, profile: RepoProfile) -> list[str]:
    """Shipped source files whose patch adds a check that refuses input (a raise, throw or error
    return under a condition, patch.new_refusals): what the diff does, whatever the message says."""
    return [f.path for f in stats.source if not profile.is_internal(f.path) and new_refusals(f)]


def decides_type(title: TitleInfo, stats: FileStats) -> bool:
    """A claimed security fix is typed SECURITY — the most consequential reading of "[Bugfix] Fix
    XSS in …" — unless the author labelled it docs or tests, or only docs and tests change."""
    author_said_docs_or_tests = title.strong and title.change_type in (ChangeType.DOCS, ChangeType.TESTS)
    return title.security and not author_said_docs_or_tests and not stats.only({FileKind.DOCS, FileKind.TEST})


def exempts_ci(c: Context) -> bool:
    """A security fix to CI workflows (e.g. an unsafe pull_request_target) is real: no ceiling. An
    issue template or other prose under .github/ is not a workflow: a commit that only rewords
    how to report vulnerabilities keeps its docs ceiling."""
    return c.title.security and any(extension(f.path) not in PROSE_EXT for f in c.stats.of(FileKind.CI))


def pipeline_hardening(c: Context) -> Fact | None:
    """Security hardening of the pipeline that builds and publishes what users install: a floor."""
    ci = [f.path for f in c.stats.of(FileKind.CI)]
    if not (c.title.hardening and ci and any(_RELEASE_PIPELINE.search(p.rsplit("/", 1)[-1]) for p in ci)):
        return None
    return Fact(Importance.MEDIUM, phrase("offline.security.pipeline_hardening"), floor=True)


# --- conclusions ---------------------------------------------------------------------------------


def _cve(cve: str) -> Phrase | str:
    """The CVE or GHSA id as an aside of a sentence ('Security fix (CVE-…)'), or nothing."""
    return phrase("offline.security.cve_aside", cve=cve) if cve else ""


def facts(c: Context) -> list[Fact]:
    facts = []
    t = c.title
    shipped = runtime_lines(c.stats, c.profile)
    # High only when the diff adds the check that refuses (c.diff.refusals): the message's words
    # say where it is ("reserved", "md5"), the code says that input is now refused.
    on_boundary = bool(t.rejects and t.guard and shipped and c.diff.refusals)
    if t.security and c.ctype is ChangeType.REVERT:
        facts.append(Fact(Importance.HIGH, phrase("offline.security.reverts_security_change"), order=20))
    elif t.security or c.ctype is ChangeType.SECURITY:
        facts.append(Fact(Importance.HIGH, phrase("offline.security.security_fix", cve=_cve(t.cve)), order=20))
    elif on_boundary:
        # "Reject MD5-only hashes", "Reject case-variant reserved entry points": small diffs, but
        # they close a hole on a trust boundary and refuse input that used to pass.
        facts.append(
            Fact(Importance.HIGH, phrase("offline.security.refuses_on_trust_boundary", guard=t.guard), order=20)
        )
    elif t.guard_in_title and shipped:
        facts.append(
            Fact(Importance.MEDIUM, phrase("offline.security.title_on_trust_boundary", guard=t.guard), order=20)
        )
    elif t.security_mention and c.stats.source_lines:
        facts.append(Fact(Importance.MEDIUM, phrase("offline.security.title_mentions_security"), order=20))
    if t.rejects and not on_boundary and shipped and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        facts.append(Fact(Importance.MEDIUM, phrase("offline.security.refuses_input", rejects=t.rejects), order=21))
    # Restructuring code under auth/ or crypto/ is not a security change; fixing or adding is.
    if c.diff.security_paths and c.ctype not in (
        ChangeType.REFACTOR,
        ChangeType.PERFORMANCE,
        ChangeType.TESTS,
        ChangeType.DOCS,
    ):
        paths = Names(c.diff.security_paths)
        facts.append(Fact(Importance.MEDIUM, phrase("offline.security.touches_sensitive_paths", paths=paths), order=22))
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []
    title = c.title
    if title.security and c.ctype is ChangeType.REVERT:
        out.append(
            Risk(
                20,
                phrase("offline.security.reverted_fix_may_be_back"),
                phrase("offline.security.hold_back_revert"),
            )
        )
    elif title.security or c.ctype is ChangeType.SECURITY:
        out.append(
            Risk(
                20,
                phrase("offline.security.old_versions_vulnerable", cve=_cve(title.cve)),
                phrase("offline.security.check_and_upgrade"),
            )
        )
    if title.rejects:
        out.append(
            Risk(
                21,
                phrase("offline.security.input_now_refused", rejects=title.rejects, subject=clip(title.subject, 80)),
                phrase("offline.security.try_real_inputs"),
            )
        )
    if title.guard and (title.guard_in_title or title.rejects) and not title.security:
        names = WhereNames(c.stats, c.diff.hunk_names, empty=phrase("offline.security.the_change"))
        out.append(
            Risk(
                22,
                phrase("offline.security.trust_boundary_mistake", guard=title.guard),
                phrase("offline.security.review_guard_handling", names=names, guard=title.guard),
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    out: list[Insight] = []
    if c.title.cve:
        out.append(Insight("security", 10, phrase("offline.security.names_cve", cve=c.title.cve)))
    elif c.title.security:
        out.append(Insight("security", 10, phrase("offline.security.mentions_security_issue")))
    if c.diff.security_paths:
        paths = Names(c.diff.security_paths)
        out.append(Insight("security", 11, phrase("offline.security.sensitive_paths_listed", paths=paths)))
    return out
