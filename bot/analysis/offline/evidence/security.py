"""Security: everything the analyser knows about it, in one place.

The words that claim a fix (CVE ids, "XSS", "path traversal") or only mention security, the words
that put a change on a trust boundary (md5, reserved names, symlinks, credentials), input newly
refused, security-sensitive paths (auth/, crypto/), hardening of the release pipeline — and the
facts, risks and insights that follow from them.

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
from ..message import prose
from ..patch import new_refusals
from ..paths import PROSE_EXT, FileKind, extension
from ..stats import WhereNames, runtime_lines

if TYPE_CHECKING:
    from ...profile import RepoProfile
    from ..stats import FileStats
    from ..title import TitleInfo

# Words that claim a security fix. A bare "security" ("Add security headers option") only notes it.
_SECURITY_WORDS = re.compile(
    r"\b(CVE-\d{4}-\d{4,}|GHSA(-\w{4}){3}|security (fix|issue|bug|hole|patch|advisory)"
    r"|vulnerab\w+|XSS|CSRF|SSRF|RCE|(sql|command|code|header|template) injection"
    r"|path traversal|privilege escalation|auth(entication)? bypass)\b",
    re.I,
)
_SECURITY_MENTION = re.compile(r"\bsecurity\b", re.I)
_CVE = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-\w{4}){3})\b", re.I)
# "Reject …", "Require …", "Disallow …": input that was accepted is refused after this change.
# "Error on …" is one when the program is what errors ("Error on top-level options", "now error
# when …", "emit an error for …"), not when the error is the bug fixed ("Fix syntax error on …",
# "Fix an INTERNAL ERROR when …") or a message made clearer ("Raise a better error when …").
_REJECT_WORDS = re.compile(
    r"^(reject|refuse|disallow|forbid|enforce|require|deny|block|prohibit)s?\b"
    r"|\b(reject\w*|refus\w*|disallow\w*|forbid\w*|enforc\w*|prohibit\w*"
    r"|no longer (accept|allow)\w*|rais(e|es|ing) (an? )?(explicit )?[`'\"]?\w*error)\b"
    r"|^error (on|for|when)\b|\b(now|to|will|should|must|then) error (on|for|when)\b"
    r"|\b(show|emit|report|give|return|add|generate|raise|issue|produce)(s|es|ed|d|ing)? (an? )?"
    r"(?!(better|nicer|clearer|cleaner|more|improved|friendlier|helpful)\b)(\w+ )?error (on|for|when)\b",
    re.I,
)
_NEGATED = re.compile(
    r"\b(do not|don't|does not|doesn't|no|not|never|stop|avoid|without|unnecessar\w*)\s+(\w+\s+)?$", re.I
)
# Words that put a change on a trust boundary even when nobody wrote "security". "Reserved" and
# "escape" only in that sense: reserved names (not "output reserved per request"), escaping a
# directory or markup (not escaping quotes in a string).
_GUARD_WORDS = re.compile(
    r"\b(insecure|bypass\w*|integrity|md5|sha-?1|(path|directory|zip|archive)[- ]traversal"
    r"|reserved[- ](\w+[- ])?(names?|words?|keywords?|identifiers?|entry[- ]points?|file ?names?|paths?"
    r"|characters?|prefix(es)?|namespaces?|scripts?|commands?|device names?)"
    r"|escap(e|es|ing)( from| out of)? (the |a |its |their )?(\w+[- ])?(dir|dirs|directory|directories|folder"
    r"|root|sandbox|jail|container|target|scope)\b|(sandbox|jail|container|chroot|path|directory) escapes?"
    r"|(html|shell|sql|xml) escap\w*|escap(e|es|ing) (the )?(html|shell|sql|xml)\b"
    r"|symlinks?|untrusted|spoof\w*|tamper\w*|injection|sanitiz\w*"
    r"|credentials?|secrets|secret (keys?|tokens?|values?)|api[- ]keys?|privilege\w*|permissions?"
    r"|checksums?|hash-checking|require-hashes)\b",
    re.I,
)
_HARDENING_WORDS = re.compile(
    r"\b(harden\w*|isolat\w*|credentials?|permissions?|least[- ]privilege|poison\w*"
    r"|injection|caches?|cache-aware)\b",
    re.I,
)
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


# --- reading the message --------------------------------------------------------------------------


# The message rules read words, not names: `prose` masks file names, paths and identifiers
# ("Update security.py", "Bump Swatinem/rust-cache", "prohibit_none_typevar_overlap").


def claims_fix(title_text: str) -> bool:
    return bool(_SECURITY_WORDS.search(prose(title_text, spans=False)))


def mentions(title_text: str) -> bool:
    return bool(_SECURITY_MENTION.search(prose(title_text)))


def cve(title: str, body: str) -> str:
    """The first CVE or GHSA id anywhere in the message, upper-cased ('' when none)."""
    m = _CVE.search(f"{title}\n{body}")
    return m.group(0).upper() if m else ""


def refused_input(subject: str) -> str:
    """The first 'reject/require …' word that is not negated ('Do not error on …'); "raise
    `TypeError`" keeps its code span."""
    subject = prose(subject, spans=False)
    for m in _REJECT_WORDS.finditer(subject):
        if not _NEGATED.search(subject[max(0, m.start() - 30) : m.start()]):
            said = re.sub(r"[`'\"]", "", m.group(0)).lower()
            return re.sub(r"^.* (error (on|for|when))$", r"\1", said)  # "emit an error for" → "error for"
    return ""


def guard(title_text: str, body_text: str) -> tuple[str, bool]:
    """(the trust-boundary word of the title, else of the body; whether it is in the title)."""
    in_title = _GUARD_WORDS.search(prose(title_text))
    found = in_title or _GUARD_WORDS.search(prose(body_text))
    return (found.group(0) if found else ""), bool(in_title)


def hardening(title_text: str) -> bool:
    return bool(_HARDENING_WORDS.search(prose(title_text)))


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
