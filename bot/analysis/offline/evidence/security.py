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
from ..lang import Names
from ..patch import new_refusal_checks, refusal_head
from ..paths import PROSE_EXT, FileKind, extension
from ..stats import WhereNames, patches_unknown, runtime_lines

if TYPE_CHECKING:
    from ...repo_config import RepoProfile
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


def refusal_checks(stats: FileStats, profile: RepoProfile) -> list[tuple[str, str, str]]:
    """(path, what refuses, the check as written) for each check a shipped source file's patch adds
    that refuses input (a raise, throw or error return under a condition,
    patch.new_refusal_checks): what the diff does, whatever the message says."""
    return [
        (f.path, refusal_head(code), said)
        for f in stats.source
        if not profile.is_internal(f.path)
        for code, said in new_refusal_checks(f)
    ]


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


# Words of a trust-boundary phrase that say where, not what ("path traversal": traversal).
_GENERIC_GUARD_WORDS = frozenset(
    {"path", "directory", "dir", "zip", "archive", "the", "a", "its", "their", "from", "out", "of"}
    | {"html", "shell", "sql", "xml", "api", "secret", "hash"}
)


def _stem(guard: str) -> str:
    """The word of a trust-boundary phrase a check would mention: 'reserved entry points' → 'reserv',
    'escape scripts dir' → 'escape', 'path traversal' → 'travers', 'MD5' → 'md5'."""
    found = re.findall(r"[a-z0-9]+", guard.lower())
    word = next((w for w in found if w not in _GENERIC_GUARD_WORDS), found[0] if found else "")
    return re.sub(r"(s|es|ed|ing|ion|ions|al)$", "", word) if len(word) > 5 else word


def _guarding_checks(c: Context) -> list[tuple[str, str, str]]:
    """The new refusing checks that are about the title's trust-boundary word (the MD5 hashes,
    the reserved names): the word is where, the check is what the diff does there."""
    stem = _stem(c.title.guard)
    return [check for check in c.diff.refusal_checks if stem and stem in check[2].lower()] if stem else []


def refuses_input(c: Context) -> bool:
    """The title says input is refused from now on, and the diff adds a check that refuses (or no
    patch is at hand to say otherwise); a change its author says keeps behaviour is not one."""
    return (
        bool(c.title.rejects)
        and not c.title.preserving
        and not c.title.clearer_error  # "raise a proper error": the input failed before too
        and (bool(c.diff.refusals) or patches_unknown(c.stats, c.profile))
    )


def on_guard(c: Context) -> bool:
    """The title's trust-boundary word is borne out: a new check about it, or sensitive paths."""
    return bool(c.title.guard) and bool(
        _guarding_checks(c) or c.diff.security_paths or patches_unknown(c.stats, c.profile)
    )


def facts(c: Context) -> list[Fact]:
    facts = []
    t = c.title
    shipped = runtime_lines(c.stats, c.profile)
    # High only when the diff adds the check that refuses, and the check is about the title's
    # trust-boundary word: the message's words say where ("reserved", "md5"), the code says that
    # input is now refused there. A word alone is a hint, never evidence.
    on_boundary = bool(t.rejects and t.guard and shipped and _guarding_checks(c))
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
    elif t.guard_in_title and shipped and on_guard(c):
        facts.append(
            Fact(Importance.MEDIUM, phrase("offline.security.title_on_trust_boundary", guard=t.guard), order=20)
        )
    elif (
        t.security_mention
        and c.stats.source_lines
        and (c.diff.security_paths or c.diff.refusals or patches_unknown(c.stats, c.profile))
    ):
        facts.append(Fact(Importance.MEDIUM, phrase("offline.security.title_mentions_security"), order=20))
    if not on_boundary and refuses_input(c) and shipped and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
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
    if refuses_input(c):
        checks = _guarding_checks(c) or list(c.diff.refusal_checks)
        if checks:
            path, head, _ = checks[0]
            said = phrase("offline.security.check_now_refuses", path=path, check=head or title.rejects)
        else:
            said = phrase("offline.security.input_now_refused", rejects=title.rejects)
        out.append(Risk(21, said, phrase("offline.security.try_real_inputs")))
    if title.guard and (title.guard_in_title or title.rejects) and not title.security and on_guard(c):
        names = WhereNames(c.stats, c.diff.hunk_names, empty=phrase("offline.security.the_change"))
        out.append(
            Risk(
                22,
                phrase("offline.security.trust_boundary_mistake", guard=title.guard, names=names),
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
