"""Shape rules: values whose form alone says credential, whatever name they are given.

PEM private keys, cloud keys (AWS, Google, Azure `AccountKey=`), vendor tokens with a fixed
prefix or layout (GitHub, GitLab, Slack, Stripe, OpenAI/Anthropic, PyPI, npm, SendGrid, Discord,
Telegram, Twilio, Mailchimp, Artifactory, Square, Hugging Face, …, and the tables of
vendor_tables.py), JWTs (whatever their header), Authorization headers, passwords on a command
line, and any short prefix followed by a long part random beyond doubt. Each vendor rule names
the vendors it was written for, so `Shapes.without` can leave them out (leave-one-vendor-out, in
bench/eval_secrets.py).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from .names import IDENTIFIER, wordy_identifier
from .placeholders import FAKE_MARKER, MARK_PREFIX, SAFE_VALUES, is_placeholder, mark
from .shape_rule import Rule, whole_table_rule
from .values import (
    DIGIT,
    ID_PREFIXES,
    NUMBER,
    REFERENCE,
    VERSION,
    alternates,
    char_classes,
    entropy,
    looks_random,
    readable,
)
from .vendor_tables import LAYOUT_TABLE, PREFIXED_TABLE


def _v(names: str) -> tuple[str, ...]:
    return tuple(names.split())


def _b64_json_header(token: str) -> bool:
    """Does the first dot-separated segment decode to a JSON object (a JWT header)?"""
    head = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return raw.lstrip()[:1] == b"{"


_B = r"(?<![A-Za-z0-9_])"  # a token starts here
_E = r"(?![A-Za-z0-9_])"  # and ends here


RULES: tuple[Rule, ...] = (
    # A whole PEM block; when its END line is missing (clipped patch), the base64 lines after it.
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,16000}?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:\r?\n[+\- ]?[ \t]*(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment):.*|)(?=\r?\n|\Z))*)"
        ),
        ("private key",),
    ),
    Rule(
        "private-key",
        re.compile(r"\bPuTTY-User-Key-File-\d: [\s\S]{0,8000}?Private-MAC: [0-9a-f]+"),
        ("putty-user-key",),
    ),
    Rule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+"),
        ("hooks.slack",),
        vendors=_v("slack"),
    ),
    Rule(
        "webhook-url",
        re.compile(r"https://(?:[a-z0-9\-]+\.)?discord(?:app)?\.com/api/webhooks/[A-Za-z0-9_/@\-]+"),
        ("webhook",),
        vendors=_v("discord"),
    ),
    Rule(
        "webhook-url",
        re.compile(
            r"https://(?:[a-z0-9\-]+\.)?(?:outlook\.office\.com/webhook|[a-z0-9\-]+\.webhook\.office\.com/webhookb2)"
            r"/[A-Za-z0-9_/@\-]+"
        ),
        ("webhook",),
        vendors=_v("microsoft microsoftteams teams"),
    ),
    Rule(
        "github-token",
        re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        vendors=_v("github"),
    ),
    Rule(
        "gitlab-token",
        re.compile(
            _B + r"(?:gl(?:pat|dt|ptt|rt|cbt|soat|ffct|imt|oas|ft|ct)-[A-Za-z0-9_\-]{20,}"
            r"|glagent-[A-Za-z0-9_\-]{50,}|GR1348941[A-Za-z0-9_\-]{20,})"
        ),
        (
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "gloas-",
            "glft-",
            "glct-",
            "glagent-",
            "gr1348941",
        ),
        vendors=_v("gitlab"),
    ),
    Rule(
        "slack-token",
        re.compile(r"\b(?:xox[a-z]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})"),
        ("xox", "xapp-"),
        vendors=_v("slack"),
    ),
    Rule(
        "stripe-key",
        re.compile(_B + r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})" + _E),
        ("_live_", "_test_", "_prod_", "whsec_"),
        exact=("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"),
        vendors=_v("stripe"),
    ),
    # OpenAI-style: sk-…, sk-proj-…, sk-ant-…, DeepSeek/Moonshot keys of the same shape. At least
    # three digits, so CSS classes like "sk-spinner-fading-circle-wrapper" survive.
    Rule(
        "openai-key",
        re.compile(r"\bsk-(?=(?:[A-Za-z_\-]*[0-9]){3})[A-Za-z0-9_\-]{20,}"),
        ("sk-",),
        vendors=_v("openai anthropic deepseek moonshot"),
    ),
    Rule(
        "google-api-key",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
        ("aiza",),
        vendors=_v("google gcp firebase"),
    ),
    Rule(
        "aws-access-key-id",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        ("akia", "asia", "abia", "acca", "a3t"),
        exact=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        vendors=_v("aws amazon"),
    ),
    Rule(
        "aws-secret-key",
        re.compile(
            r"(?i)aws[\w.\-]{0,30}secret[\w.\-]{0,30}[\"']?[ \t]*(?:=>|:=|[:=])[ \t]*[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret",),
        "value",
        check=lambda v: len(set(v)) > 2,
        vendors=_v("aws amazon"),
    ),
    Rule(
        "azure-storage-key",
        re.compile(
            r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=(?P<value>[A-Za-z0-9+/%]{20,}={0,2})"
        ),
        ("accountkey", "sharedaccess", "sig="),
        "value",
        check=lambda v: sum(c.isdigit() for c in v) >= 2 and any(c.isupper() for c in v),
        vendors=_v("azure microsoft"),
    ),
    Rule(
        "jwt",
        re.compile(_B + r"(?:eyJ|eyA|ewo|ew0|e3s|ewk)[A-Za-z0-9_\-]{6,}=*\.[A-Za-z0-9_\-]{4,}=*\.?[A-Za-z0-9_\-+/]*=*"),
        ("eyj", "eya", "ewo", "ew0", "e3s", "ewk"),
        check=_b64_json_header,
    ),
    Rule(
        "npm-token",
        re.compile(r":_(?:authToken|auth|password)=[ \t]*(?P<value>[^\s\"'$][^\s\"']*)"),
        ("_auth", "_password"),
        "value",
        vendors=_v("npm"),
    ),
    Rule(
        "softlayer-key",
        re.compile(r"api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/(?P<value>[a-z0-9]{64})"),
        ("softlayer",),
        "value",
        vendors=_v("softlayer ibm"),
    ),
    Rule("grafana-token", re.compile(r"\beyJrIjoi[A-Za-z0-9]{50,}=*"), ("eyjrijoi",), vendors=_v("grafana")),
    Rule("pypi-token", re.compile(r"\bpypi-Ag[A-Za-z0-9_\-]{40,}"), ("pypi-ag",), vendors=_v("pypi")),
    Rule("npm-token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), ("npm_",), vendors=_v("npm")),
    Rule(
        "sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,}"), ("sg.",), vendors=_v("sendgrid")
    ),
    Rule(
        "discord-token",
        re.compile(r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}"),
        (".",),
        check=lambda v: any(c.isdigit() for c in v.split(".")[0]),
        vendors=_v("discord"),
    ),
    Rule(
        "telegram-bot-token",
        re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E),
        (":aa",),
        exact=(":AA",),
        vendors=_v("telegram"),
    ),
    Rule(
        "twilio-key", re.compile(r"\b(?:AC|SK)[a-z0-9]{32}\b|\bSK[0-9a-fA-F]{32}\b"), ("ac", "sk"), vendors=_v("twilio")
    ),
    Rule("mailchimp-key", re.compile(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"), ("-us",), vendors=_v("mailchimp")),
    Rule(
        "artifactory-token",
        re.compile(r"(?:(?<=[\s=:\"'`])|^)(?:AKC[A-Za-z0-9]{10,}|AP[0-9A-F][A-Za-z0-9]{8,})" + _E, re.M),
        ("akc",) + tuple(f"ap{c}" for c in "0123456789abcdef"),
        check=lambda v: not v.isupper() or any(c.isdigit() for c in v[3:]),
        exact=re.compile(r"A(?:KC|P[0-9A-F])"),
        vendors=_v("artifactory jfrog"),
    ),
    Rule("square-token", re.compile(r"\bsq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}"), ("sq0",), vendors=_v("square")),
    Rule(
        "square-token", re.compile(r"\bEAAA[A-Za-z0-9_\-]{60}" + _E), ("eaaa",), exact=("EAAA",), vendors=_v("square")
    ),
    Rule(
        "huggingface-token",
        re.compile(r"\b(?:hf_|api_org_)[A-Za-z]{34}" + _E),
        ("hf_", "api_org_"),
        exact=("hf_", "api_org_"),
        vendors=_v("huggingface"),
    ),
    Rule("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{30,}"), ("sk-ant-",), vendors=_v("anthropic")),
    Rule("age-secret-key", re.compile(r"AGE-SECRET-KEY-1[A-Z0-9]{58}"), ("age-secret-key-",), vendors=_v("age")),
    whole_table_rule(PREFIXED_TABLE, _B, _E),
    # Any short vendor prefix, then a long random tail mixing upper, lower and digits
    # (pplx-…, ntn_…, pnu_…, rdme_…, sm_pat_…, HRKU-…, ico-…): the tail alone is what no code is.
    Rule(
        "api-token",
        re.compile(
            r"(?<![\w\-.~/+])[A-Za-z][A-Za-z0-9]{1,9}[_\-~.](?:[a-z0-9]{1,12}[_\-.]){0,3}[A-Za-z0-9]{20,}"
            r"(?:[_\-][A-Za-z0-9]{4,})*(?![\w\-])"
        ),
        ("_", "-", "~", "."),
        0,
        check=lambda v: _prefixed_token(v),
    ),
    whole_table_rule(LAYOUT_TABLE, r"(?<![\w\-])", r"(?![\w\-])"),
    Rule(
        "password",
        re.compile(r"-(?:(?<=\s-)u|-user)[ \t]+[\"']?[^\s:\"']*:(?P<value>[^\s\"']{4,}|\"[^\"\n]+\"|'[^'\n]+')"),
        ("-u", "--user"),
        "value",
        check=lambda v: not is_placeholder(v.strip("\"'")),
    ),
    # `-u USER -p PASSWORD` on one command line (docker login, mysql, psexec, …)
    Rule(
        "password",
        re.compile(
            r"-u(?<![\w\-]-u)[ \t]*(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\-\"'][^\s]*)[ \t]+-p[ \t]*"
            r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s\-\"'][^\s\"']*)"
        ),
        ("-u",),
        "value",
        check=lambda v: _cli_password(v.strip("\"'")),
    ),
    Rule(
        "auth-header",
        re.compile(
            r"(?i)(?:authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|bot|apikey|sso-key|api-token|digest)[ \t]+)?"
            r"|\b(?:bearer|basic)[ \t]+)"
            r"(?P<value>[A-Za-z0-9._~+/\-:@=]{8,})"
        ),
        ("bearer", "authorization", "basic"),
        "value",
        check=lambda v: (
            not is_placeholder(v)
            and v.lower() not in SAFE_VALUES
            and not readable(v)
            and not FAKE_MARKER.search(v.lower())
            and (looks_random(v) or (len(v) >= 8 and char_classes(v) >= 2 and not IDENTIFIER.fullmatch(v)))
            and not REFERENCE.fullmatch(v)
        ),
    ),
)


# Rules that need text around a token (spaces, quotes, several lines) run over the whole text;
# their hints are rare words, so most texts skip them. Every other rule only looks inside "runs":
# stretches of token characters at least 16 long that have a digit or mix upper and lower case.
# That is a few hundred places per megabyte of diff instead of every position.
_TEXT_KINDS = frozenset(
    {"private-key", "aws-secret-key", "auth-header", "password", "npm-token", "azure-storage-key", "softlayer-key"}
)
# Tokens that may be all lower-case letters or shorter than a run: their hints are looked up in the
# whole text.
_LOWERCASE_TOKEN_KINDS = frozenset({"huggingface-token", "artifactory-token"})
_RUN = re.compile(r"[A-Za-z0-9_\-.~+/=:|@%]{16,}")


# Rules without a distinctive literal (Discord, Twilio, Artifactory, vendor-prefix tokens) only look
# at runs that mix letters with digits or upper with lower case; the others at runs holding a hint.
_GENERAL_HINTS = frozenset({".", "_", "-", "~", "|", "ac", "sk"})


@dataclass(frozen=True)
class Shapes:
    """The shape rules in force, sorted by how they are looked for."""

    blocks: tuple[Rule, ...]  # PEM and PuTTY blocks, first: their base64 lines are runs too
    text: tuple[Rule, ...]  # the other rules over the whole text
    specific: tuple[Rule, ...]  # rules over the runs holding one of their hints
    general: tuple[Rule, ...]  # rules over every candidate run

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> Shapes:
        rules = tuple(rules)
        text = tuple(r for r in rules if r.kind in _TEXT_KINDS)
        run = tuple(r for r in rules if r.kind not in _TEXT_KINDS)
        return cls(
            tuple(r for r in text if r.kind == "private-key"),
            tuple(r for r in text if r.kind != "private-key"),
            tuple(r for r in run if not _GENERAL_HINTS.intersection(r.hints)),
            tuple(r for r in run if _GENERAL_HINTS.intersection(r.hints)),
        )

    @cached_property
    def finders(self) -> _Finders:
        """One regular expression per place a rule's hints are looked up, matching where any of
        those hints (or literals) occurs: a text where none does skips the loop over the rules,
        which would apply none of them (most file names, titles and short texts)."""
        spec_lowered: list[str] = []
        spec_blob: list[str] = []
        exact_original: list[str] = []
        exact_cased: list[str] = []
        patterns: list[tuple[re.Pattern[str], bool]] = []
        for rule in self.specific:
            lowercase = rule.kind in _LOWERCASE_TOKEN_KINDS
            if isinstance(rule.exact, re.Pattern):
                patterns.append((rule.exact, lowercase))
            elif rule.exact:
                (exact_original if lowercase else exact_cased).extend(rule.exact)
            else:
                (spec_lowered if lowercase else spec_blob).extend(rule.hints)
        return _Finders(
            _any_of(h for r in self.blocks for h in r.hints),
            _any_of(h for r in self.text for h in r.hints),
            _any_of(spec_lowered),
            _any_of(spec_blob),
            _any_of(exact_original),
            _any_of(exact_cased),
            tuple(patterns),
        )

    def without(self, vendors: frozenset[str]) -> Shapes:
        """The same rules less those written for any of `vendors` (table rows one by one)."""
        kept = []
        for rule in RULES:
            if rule.rebuild is not None:
                rebuilt = rule.rebuild(vendors)
                if rebuilt is not None:
                    kept.append(rebuilt)
            elif not vendors.intersection(rule.vendors):
                kept.append(rule)
        return Shapes.of(kept)


SHAPES = Shapes.of(RULES)


def _apply(rule: Rule, text: str, kinds: Counter) -> str:
    def replace(m: re.Match[str]) -> str:
        value = m.group(rule.group)
        if MARK_PREFIX in value or (rule.check is not None and not rule.check(value)):
            return m.group(0)
        kinds[rule.kind] += 1
        start, end = m.span(rule.group)
        return m.group(0)[: start - m.start()] + mark(rule.kind) + m.group(0)[end - m.start() :]

    return rule.pattern.sub(replace, text)


def redact_shapes(text: str, kinds: Counter, shapes: Shapes = SHAPES) -> str:
    lowered = text.lower()  # hints are looked up in the original; redaction only removes text
    finders = shapes.finders
    if finders.found(finders.blocks, lowered):
        for rule in shapes.blocks:
            if any(hint in lowered for hint in rule.hints):
                text = _apply(rule, text, kinds)
    # Vendor tokens carry digits or capitals: look for their hints only in such runs, a fraction
    # of the text (looking for 150 hints in the whole text costs more than everything else).
    runs = _token_runs(text)
    blob_cased = " ".join(m.group(0) for m in runs)
    blob = blob_cased.lower()
    original = text
    if finders.any_specific(lowered, blob, original, blob_cased):
        text = _specific(shapes, text, kinds, lowered, blob, original, blob_cased)
    text = _redact_runs(text, runs if text == original else _token_runs(text), kinds, shapes.general)
    if finders.found(finders.text, lowered):
        for rule in shapes.text:
            if any(hint in lowered for hint in rule.hints):
                text = _apply(rule, text, kinds)
    return text


def _specific(
    shapes: Shapes, text: str, kinds: Counter, lowered: str, blob: str, original: str, blob_cased: str
) -> str:
    for rule in shapes.specific:
        if rule.exact:
            where = original if rule.kind in _LOWERCASE_TOKEN_KINDS else blob_cased
            if (
                rule.exact.search(where) is not None
                if isinstance(rule.exact, re.Pattern)
                else any(literal in where for literal in rule.exact)
            ):
                text = _apply(rule, text, kinds)
        elif any(hint in (lowered if rule.kind in _LOWERCASE_TOKEN_KINDS else blob) for hint in rule.hints):
            text = _apply(rule, text, kinds)
    return text


@dataclass(frozen=True)
class _Finders:
    blocks: re.Pattern[str] | None  # the block rules' hints, in the lowered text
    text: re.Pattern[str] | None  # the text rules' hints, in the lowered text
    spec_lowered: re.Pattern[str] | None  # hints of specific rules looked up in the lowered text
    spec_blob: re.Pattern[str] | None  # … and in the lowered runs
    exact_original: re.Pattern[str] | None  # literals of specific rules looked up in the text
    exact_cased: re.Pattern[str] | None  # … and in the runs as they are
    patterns: tuple[tuple[re.Pattern[str], bool], ...]  # (a rule's exact pattern, in the text?)

    @staticmethod
    def found(finder: re.Pattern[str] | None, where: str) -> bool:
        return finder is not None and finder.search(where) is not None

    def any_specific(self, lowered: str, blob: str, original: str, blob_cased: str) -> bool:
        """Whether the loop over the specific rules would apply any: exactly its conditions."""
        return (
            self.found(self.spec_lowered, lowered)
            or self.found(self.spec_blob, blob)
            or self.found(self.exact_original, original)
            or self.found(self.exact_cased, blob_cased)
            or any(p.search(original if in_text else blob_cased) is not None for p, in_text in self.patterns)
        )


def _any_of(literals: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern matching where any of `literals` occurs (None for none: nothing to find)."""
    unique = sorted(set(literals), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, unique))) if unique else None


def _token_runs(text: str) -> list[re.Match[str]]:
    """The runs of `text` with a digit or a capital (or no letter): names, paths and words are not."""
    found = []
    for m in _RUN.finditer(text):
        run = m.group(0)
        if not run.islower() or DIGIT.search(run):
            found.append(m)
    return found


# A stretch of 20+ letters and digits that is not lowercase hex.
_NOT_HASH_STRETCH = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]{20})[A-Za-z0-9]*?[g-zA-Z]")


def _redact_runs(text: str, runs: list[re.Match[str]], kinds: Counter, rules: tuple[Rule, ...]) -> str:
    candidates: list[re.Match[str]] = []
    for m in runs:
        run = m.group(0)
        if ("/" in run or ":" in run) and not _NOT_HASH_STRETCH.search(run):
            continue  # URLs and `sha256:…` whose only long stretches are hashes
        candidates.append(m)
    if not candidates:
        return text
    # Each rule runs once over the candidate runs joined by spaces: no rule matches a space or
    # looks past one, so this is the same as running it on each run alone, without a Python loop.
    joined = " ".join(m.group(0) for m in candidates)
    changed = joined
    for rule in rules:
        changed = _apply(rule, changed, kinds)
    if changed == joined:
        return text
    pieces, at = [], 0
    for m, new in zip(candidates, changed.split(" ")):
        if new != m.group(0):
            pieces.append(text[at : m.start()])
            pieces.append(new)
            at = m.end()
    pieces.append(text[at:])
    return "".join(pieces)


def _cli_password(value: str) -> bool:
    """The value of `-p` after `-u USER`: not a port, a version, a variable or a placeholder."""
    return not (
        is_placeholder(value) or NUMBER.fullmatch(value) or VERSION.fullmatch(value) or value.lower() in SAFE_VALUES
    )


def _prefixed_token(token: str) -> bool:
    """`pplx-…`, `dp.st.dev.…`, `live_126031192_…`, `github_pat_11A…_zLv…`: a short prefix, maybe
    a word or a number, then a long part random beyond doubt (not an id that APIs hand out)."""
    parts = re.split(r"[_\-~.]", token)
    prefix = parts[0].lower()
    tail = max(parts[1:], key=len)
    if prefix in ID_PREFIXES or prefix.endswith(("id", "toolu", "call")) or len(tail) < 20:
        return False
    if wordy_identifier(tail):
        return False  # `pytest.PytestRemovedIn10Warning`: a module and a class made of words
    return char_classes(tail) == 3 and entropy(tail) >= 3.5 and alternates(tail)
