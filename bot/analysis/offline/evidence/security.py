"""Security: everything the analyser knows about it, in one place.

The words that claim a fix (CVE ids, "XSS", "path traversal") or only mention security, the words
that put a change on a trust boundary (md5, reserved names, symlinks, credentials), input newly
refused, security-sensitive paths (auth/, crypto/), hardening of the release pipeline — and the
facts, risks and insights that follow from them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....models import ChangeType, Importance
from ..context import Context, Fact, Insight, Risk
from ..lang import clip, name_list
from ..paths import FileKind
from ..stats import runtime_lines, where_names

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
_REJECT_WORDS = re.compile(
    r"^(reject|refuse|disallow|forbid|enforce|require|deny|block|prohibit)s?\b"
    r"|\b(reject\w*|refus\w*|disallow\w*|forbid\w*|enforc\w*|prohibit\w*"
    r"|no longer (accept|allow)\w*|rais(e|es|ing) (an? )?(explicit )?[`'\"]?\w*error"
    r"|error (on|for|when))\b",
    re.I,
)
_NEGATED = re.compile(
    r"\b(do not|don't|does not|doesn't|no|not|never|stop|avoid|without|unnecessar\w*)\s+(\w+\s+)?$", re.I
)
# Words that put a change on a trust boundary even when nobody wrote "security".
_GUARD_WORDS = re.compile(
    r"\b(insecure|bypass\w*|integrity|md5|sha-?1|reserved|(path|directory|zip|archive)[- ]traversal"
    r"|escap(e|es|ing)|symlinks?|untrusted|spoof\w*|tamper\w*|injection|sanitiz\w*"
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


def claims_fix(title_text: str) -> bool:
    return bool(_SECURITY_WORDS.search(title_text))


def mentions(title_text: str) -> bool:
    return bool(_SECURITY_MENTION.search(title_text))


def cve(title: str, body: str) -> str:
    """The first CVE or GHSA id anywhere in the message, upper-cased ('' when none)."""
    m = _CVE.search(f"{title}\n{body}")
    return m.group(0).upper() if m else ""


def refused_input(subject: str) -> str:
    """The first 'reject/require …' word that is not negated ('Do not error on …')."""
    for m in _REJECT_WORDS.finditer(subject):
        if not _NEGATED.search(subject[max(0, m.start() - 30) : m.start()]):
            return re.sub(r"[`'\"]", "", m.group(0)).lower()
    return ""


def guard(title_text: str, body_text: str) -> tuple[str, bool]:
    """(the trust-boundary word of the title, else of the body; whether it is in the title)."""
    in_title = _GUARD_WORDS.search(title_text)
    found = in_title or _GUARD_WORDS.search(body_text)
    return (found.group(0) if found else ""), bool(in_title)


def hardening(title_text: str) -> bool:
    return bool(_HARDENING_WORDS.search(title_text))


# --- reading the files ---------------------------------------------------------------------------


def sensitive_paths(stats: FileStats, profile: RepoProfile) -> list[str]:
    """Shipped source, config and build files under auth/, crypto/, tls/ … (by path name)."""
    runtime = [
        (f, k)
        for f, k in stats.files
        if k in (FileKind.SOURCE, FileKind.CONFIG, FileKind.BUILD) and not profile.is_internal(f.path)
    ]
    return [f.path for f, _ in runtime if set(re.split(r"[/._-]", f.path.lower())) & _SECURITY_TOKENS]


def decides_type(title: TitleInfo, stats: FileStats) -> bool:
    """A claimed security fix is typed SECURITY — the most consequential reading of "[Bugfix] Fix
    XSS in …" — unless the author labelled it docs or tests, or only docs and tests change."""
    author_said_docs_or_tests = title.strong and title.change_type in (ChangeType.DOCS, ChangeType.TESTS)
    return title.security and not author_said_docs_or_tests and not stats.only({FileKind.DOCS, FileKind.TEST})


def exempts_ci(c: Context) -> bool:
    """A security fix to CI workflows (e.g. an unsafe pull_request_target) is real: no ceiling."""
    return c.title.security and FileKind.CI in c.stats.kinds


def pipeline_hardening(c: Context) -> Fact | None:
    """Security hardening of the pipeline that builds and publishes what users install: a floor."""
    ci = [f.path for f in c.stats.of(FileKind.CI)]
    if not (c.title.hardening and ci and any(_RELEASE_PIPELINE.search(p.rsplit("/", 1)[-1]) for p in ci)):
        return None
    return Fact(
        Importance.MEDIUM,
        "加固了构建和发布流水线（权限、凭据或缓存），关系到发布产物的可信度",
        "Hardens the release pipeline (permissions, credentials or caches) that produces what users install",
        floor=True,
    )


# --- conclusions ---------------------------------------------------------------------------------


def facts(c: Context) -> list[Fact]:
    facts = []
    t = c.title
    shipped = runtime_lines(c.stats, c.profile)
    if t.security and c.ctype is ChangeType.REVERT:
        facts.append(
            Fact(
                Importance.HIGH,
                "回滚了一个安全相关的改动，已修复的问题可能重新暴露",
                "Reverts a security-related change; the issue it fixed may be exposed again",
                order=20,
            )
        )
    elif t.security or c.ctype is ChangeType.SECURITY:
        what = t.cve or ""
        facts.append(
            Fact(
                Importance.HIGH,
                f"安全修复{f'（{what}）' if what else ''}，受影响版本应尽快升级",
                f"Security fix{f' ({what})' if what else ''}; affected versions should upgrade soon",
                order=20,
            )
        )
    elif t.rejects and t.guard and shipped:
        # "Reject MD5-only hashes", "Reject case-variant reserved entry points": small diffs, but
        # they close a hole on a trust boundary and refuse input that used to pass.
        facts.append(
            Fact(
                Importance.HIGH,
                f"在安全相关的检查上（{t.guard}）拒绝以前接受的输入，即使改动很小也会影响用户",
                f"Newly refuses input on a trust boundary ({t.guard}); small as the diff is, "
                "input that used to pass now fails",
                order=20,
            )
        )
    elif t.guard_in_title and shipped:
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"标题涉及安全相关的处理（{t.guard}），且改动了发布的代码",
                f"The title touches a trust boundary ({t.guard}) and shipped code changes",
                order=20,
            )
        )
    elif t.security_mention and c.stats.source_lines:
        facts.append(
            Fact(
                Importance.MEDIUM,
                "标题提到安全，且改动了源码",
                "The title mentions security and source code changes",
                order=20,
            )
        )
    if t.rejects and not t.guard and shipped and c.ctype not in (ChangeType.TESTS, ChangeType.DOCS):
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"开始拒绝以前接受的输入（{t.rejects}），依赖旧行为的调用会失败",
                f"Newly refuses input that was accepted before (“{t.rejects}”); callers relying on "
                "the old leniency fail",
                order=21,
            )
        )
    # Restructuring code under auth/ or crypto/ is not a security change; fixing or adding is.
    if c.diff.security_paths and c.ctype not in (
        ChangeType.REFACTOR,
        ChangeType.PERFORMANCE,
        ChangeType.TESTS,
        ChangeType.DOCS,
    ):
        names = name_list(c.diff.security_paths, True), name_list(c.diff.security_paths, False)
        facts.append(
            Fact(
                Importance.MEDIUM,
                f"改动触及安全敏感路径 {names[0]}",
                f"Touches security-sensitive paths ({names[1]})",
                order=22,
            )
        )
    return facts


def risks(c: Context) -> list[Risk]:
    out: list[Risk] = []
    title = c.title
    if title.security and c.ctype is ChangeType.REVERT:
        out.append(
            Risk(
                20,
                "被回滚的是安全相关改动，它修复的问题可能重新出现",
                "The reverted change was security-related; the issue it fixed may be back",
                "确认是否有替代修复，没有时暂缓升级到包含此回滚的版本",
                "Check whether a replacement fix exists; until then hold back upgrades that contain this revert",
            )
        )
    elif title.security or c.ctype is ChangeType.SECURITY:
        cve_zh = f"（{title.cve}）" if title.cve else ""
        cve_en = f" ({title.cve})" if title.cve else ""
        out.append(
            Risk(
                20,
                f"修复的安全问题{cve_zh}在旧版本中仍然存在",
                f"The fixed security issue{cve_en} remains in older versions",
                "确认你运行的版本是否受影响，并尽快升级到包含此提交的版本",
                "Check whether your deployed version is affected and upgrade to one containing this commit",
            )
        )
    if title.rejects:
        subject = f"“{clip(title.subject, 80)}”"
        out.append(
            Risk(
                21,
                f"以前被接受的输入现在会被拒绝（{title.rejects}）：{subject}；发送这类输入的调用方升级后会报错",
                f"Input that was accepted until now is refused ({title.rejects}): {subject}; callers sending it get "
                "an error after upgrading",
                "在升级前用真实输入（尤其是边界情况）验证一遍",
                "Run your real inputs, edge cases first, through the new version before upgrading",
            )
        )
    if title.guard and (title.guard_in_title or title.rejects) and not title.security:
        names_zh = where_names(c.stats, c.diff.hunk_names, True)
        names_en = where_names(c.stats, c.diff.hunk_names, False)
        out.append(
            Risk(
                22,
                f"改动位于信任边界（{title.guard}）：这里的错误会悄悄削弱检查，而不是明显地报错",
                f"The change sits on a trust boundary ({title.guard}): a mistake here silently weakens a check "
                "instead of failing loudly",
                f"重点审查 {names_zh or '改动'} 对 {title.guard} 的处理",
                f"Review how {names_en or 'the change'} handles {title.guard}",
            )
        )
    return out


def insights(c: Context) -> list[Insight]:
    out: list[Insight] = []
    if c.title.cve:
        out.append(Insight("security", 10, f"提交提到 {c.title.cve}", f"The commit names {c.title.cve}"))
    elif c.title.security:
        out.append(Insight("security", 10, "提交说明提到安全问题", "The message mentions a security issue"))
    if c.diff.security_paths:
        out.append(
            Insight(
                "security",
                11,
                f"改动触及安全敏感路径 {name_list(c.diff.security_paths, True)}",
                f"Touches security-sensitive paths: {name_list(c.diff.security_paths, False)}",
            )
        )
    return out
