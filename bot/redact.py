"""Secrets never reach the LLM: the one redactor for every untrusted text that is sent.

Diffs, commit messages, PR descriptions, file names, thread history and the user's question all
go through `redact()` before they are put into a prompt. Each secret becomes `[REDACTED:kind]`,
so the model and the reader know something was there; callers add the counts to the prompt and,
once per prompt actually sent, to the `digestbot_redactions_total{kind}` counter (`record()`).

Two detectors, both pure regular expressions over the text (no I/O, no dependency):

* **Shape** — values whose form alone says credential: PEM private keys, cloud keys (AWS, Google,
  Azure `AccountKey=`), vendor tokens with a fixed prefix or layout (GitHub, GitLab, Slack,
  Stripe, OpenAI/Anthropic, PyPI, npm, SendGrid, Discord, Telegram, Twilio, Mailchimp,
  Artifactory, Square, Hugging Face, …), JWTs (whatever their header), credentials in URLs, and
  any short prefix followed by a long part random beyond doubt. Each vendor rule names the vendors
  it was written for, so `redactor()` can leave them out (leave-one-vendor-out, in the bench).
* **Context** — a value next to a name or label holding a credential word anywhere (`acme_apiSecret`,
  `acmeapisecretkey`, `Zorblex API key:`, `Using Key=`), after any separator: assignments in any
  common syntax, comparisons, flags, XML elements, URL queries, a key alone on its line, and the
  loose separators of logs, tables and prose (`token - '…'`, `| key | … |`, `password is '…'`),
  after which only a random-looking value counts. The value is judged by length, character
  classes and entropy, and must not be code, a path, a URL, a version, a template, a placeholder,
  a UUID or hash next to a bare `key`, or a safe word such as `write` (GitHub's `id-token: write`).
  A value once withheld is withheld wherever else it appears in the text.

Why not a library: detect-secrets alone withholds 14% of a broad service-key corpus with its
keyword and service plugins, and its entropy plugins flag thousands of lines of ordinary code
(see README, Security). The figures of this module are printed by bench/eval_secrets.py.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import unquote

MARK_PREFIX = "[REDACTED:"


def mark(kind: str) -> str:
    return f"{MARK_PREFIX}{kind}]"


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: Counter = field(default_factory=Counter)  # kind -> how many were replaced

    @property
    def count(self) -> int:
        return sum(self.kinds.values())


def redact(text: str | None, *, _shapes: _Shapes | None = None) -> Redacted:
    """`text` with every secret replaced by [REDACTED:kind], and how many of each kind."""
    if not text:
        return Redacted(text or "")
    kinds: Counter = Counter()
    text = _redact_shapes(text, kinds, _shapes or _SHAPES)
    text = _redact_url_credentials(text, kinds)
    text = _redact_context(text, kinds)
    text = _redact_named_random(text, kinds)
    return Redacted(text, kinds)


def redactor(without_vendors: Iterable[str]) -> Callable[[str | None], Redacted]:
    """redact() without the shape rules written for these vendors: how bench/eval_secrets.py
    measures whether the other detectors withhold a vendor that no rule was written for."""
    shapes = _SHAPES.without(frozenset(without_vendors))
    return lambda text: redact(text, _shapes=shapes)


def vendor_names() -> frozenset[str]:
    """Every vendor some shape rule was written for (normalised: lower case letters and digits)."""
    return frozenset(v for rule in _RULES for v in rule.vendors)


def redact_secrets(text: str | None) -> tuple[str, int]:
    """(redacted text, number of redactions) — the short form most callers need."""
    result = redact(text)
    return result.text, result.count


def redact_text(text: str | None) -> str:
    return redact(text).text


def record(kinds: Counter | dict[str, int] | Iterable[tuple[str, int]]) -> None:
    """Count secrets withheld from one prompt that is being sent, by kind."""
    from .core import metrics

    items = kinds.items() if isinstance(kinds, dict) else kinds
    for kind, n in items:
        if n:
            metrics.count("redactions", n, kind=kind)


# =============================================================================================
# Shape rules
# =============================================================================================


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # lowercase substrings; the regex only runs when one occurs
    group: int | str = 0  # the part of the match that is replaced
    check: Callable[[str], bool] | None = None  # a last look at the replaced part
    # Case-sensitive literals, one of which every match holds: a sharper test than the lowercase
    # hints for patterns that are case-sensitive (`eaaa` is in many hashes, `EAAA` in few).
    exact: tuple[str, ...] | re.Pattern[str] = ()
    # The services the rule was written for (normalised names, aliases included); () for formats
    # and context that belong to no vendor (PEM, JWT, URL credentials, Authorization headers).
    vendors: tuple[str, ...] = ()
    # For a table's alternation: the same rule without the rows of some vendors (or None).
    rebuild: Callable[[frozenset[str]], _Rule | None] | None = None


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

# Vendor tokens with a fixed prefix or layout, one row per vendor: (vendors, branch, hints).
# Each table becomes one alternation (one regex pass instead of one per vendor); a row's vendors
# let bench/eval_secrets.py leave the rows written for a vendor out (see redactor()).
_PREFIXED_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # Fixed vendor prefixes followed by a long random tail.
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shpat_", "shpca_", "shppa_", "shpss_")),
    ("digitalocean", r"do[pro]_v1_[a-f0-9]{64}", ("dop_v1_", "dor_v1_", "doo_v1_")),
    ("doppler", r"dp\.(?:pt|st|ct|scim|sa)\.[A-Za-z0-9]{40,}", ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.")),
    ("grafana", r"gl(?:c|sa)_[A-Za-z0-9_+/=\-]{32,}", ("glc_", "glsa_")),
    ("linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", ("lin_api_", "lin_oauth_")),
    ("postman", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak-",)),
    ("pulumi", r"pul-[a-f0-9]{40}", ("pul-",)),
    ("sendinblue brevo", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ("xkeysib-",)),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?", ("dapi",)),
    ("1password onepassword", r"ops_eyJ[A-Za-z0-9+/]{100,}", ("ops_ey",)),
    ("atlassian jira confluence", r"ATATT3[A-Za-z0-9_\-=]{100,}", ("atatt3",)),
    ("atlassian jira confluence", r"ATCTT3[A-Za-z0-9_\-=]{100,}", ("atctt3",)),
    ("rubygems", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    ("docker dockerhub", r"dckr_pat_[A-Za-z0-9_\-]{27,}", ("dckr_pat_",)),
    ("planetscale", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9=_.\-]{32,}", ("pscale_",)),
    ("sentry", r"sntrys_eyJ[A-Za-z0-9+/=_\-]{50,}", ("sntry",)),
    ("sentry", r"sntryu_[a-f0-9]{64}", ("sntry",)),
    ("hashicorp vault hashicorpvault", r"hvs\.[A-Za-z0-9_\-]{90,}", ("hvs.",)),
    ("hashicorp vault hashicorpvault", r"hvb\.[A-Za-z0-9_\-]{138,}", ("hvb.",)),
    ("typeform", r"tfp_[A-Za-z0-9]{50,}", ("tfp_",)),
    ("netlify", r"nfp_[A-Za-z0-9]{36}", ("nfp_",)),
    ("figma", r"figd_[A-Za-z0-9_\-]{40}", ("figd_",)),
    ("flutterwave", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", ("flwseck",)),
    ("hashicorp terraform", r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9=_\-]{60,}", ("atlasv1",)),
    ("stripe", r"(?:r|s)k_(?:live|test)_[A-Za-z0-9]{20,}", ()),
    ("mailgun", r"key-[0-9a-f]{32}", ()),
    ("azure microsoft", r"AccountKey-[A-Za-z0-9]{20,}", ("accountkey-",)),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}", ("ezak", "eztk")),
    ("alibaba aliyun", r"LTAI[A-Za-z0-9]{20}", ("ltai",)),
    ("clojars", r"CLOJARS_[a-z0-9]{60}", ("clojars_",)),
    ("sourcegraph", r"sgp_[a-fA-F0-9]{16}_[a-fA-F0-9]{40}", ("sgp_",)),
    ("elevenlabs stripe", r"sk_[a-f0-9]{48}", ()),
    ("deepl", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx", (":fx",)),
    ("google gcp", r"ya29\.[A-Za-z0-9_\-]{30,}", ("ya29.",)),
    ("google gcp", r"1//0[A-Za-z0-9_\-]{40,}", ("1//0",)),
    (
        "aws amazon",
        r"AGPA[A-Z0-9]{16}|AIDA[A-Z0-9]{16}|AROA[A-Z0-9]{16}|ANPA[A-Z0-9]{16}",
        ("agpa", "aida", "aroa", "anpa"),
    ),
)
_LAYOUT_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("adobe", r"p8e-[a-z0-9]{32}", ("p8e-",)),
    ("airtable", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", ("pat",)),
    ("artifactory jfrog", r"cmVmd[A-Za-z0-9]{59}", ("cmvmd",)),
    ("aws amazon", r"ABSK[A-Za-z0-9+/]{100,}=*", ("absk",)),
    ("aws amazon", r"bedrock-api-key-[A-Za-z0-9+/=]{20,}", ("bedrock-api-key-",)),
    ("clickhouse", r"4b1d[A-Za-z0-9]{38}", ("4b1d",)),
    ("cloudflare", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}", ("v1.0-",)),
    ("dynatrace", r"dt0[a-z][0-9]{2}\.[a-z0-9]{24}\.[a-z0-9]{64}", ("dt0",)),
    ("facebook meta", r"EAA[A-Za-z0-9]{80,}", ("eaa",)),
    ("flutterwave", r"FLW(?:PUB|SEC)K(?:_TEST)?-[a-h0-9]{12,}(?:-X)?", ("flw",)),
    ("frameio", r"fio-u-[A-Za-z0-9\-_=]{64}", ("fio-u-",)),
    ("gitlab", r"_gitlab_session=[a-z0-9]{32}", ("_gitlab_session",)),
    ("octopus", r"API-[A-Z0-9]{26}", ("api-",)),
    ("openshift redhat", r"sha256~[\w\-]{43}", ("sha256~",)),
    ("slack", r"xoxe(?:\.xox[bp])?-\d-[A-Z0-9]{100,}", ("xoxe",)),
    ("scalingo", r"tk-us-[\w\-]{48}", ("tk-us-",)),
    ("settlemint", r"sm_[pas]at_[A-Za-z0-9]{16}", ("sm_",)),
    ("sourcegraph", r"sgp_local_[a-fA-F0-9]{40}", ("sgp_local_",)),
    ("shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", ("shippo_",)),
    ("azure microsoft", r"[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34}", ("q~",)),
    ("1password onepassword", r"A3-[A-Z0-9]{6}-[A-Z0-9\-]{20,}", ("a3-",)),
    ("heroku", r"HRKU-AA[0-9a-zA-Z_\-]{58}", ("hrku-",)),
    ("readme", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    ("sendgrid", r"SG\.[\w\-=.]{60,}", ("sg.",)),
    ("facebook meta", r"[0-9]{15,16}\|[A-Za-z0-9_\-]{27}", ("|",)),
    ("stripe elevenlabs freemius", r"sk_[A-Za-z0-9]{30,}", ("sk_",)),
)


def _table_rule(
    table: tuple[tuple[str, str, tuple[str, ...]], ...], before: str, after: str, without: frozenset[str] = frozenset()
) -> _Rule | None:
    """One alternation of a table's rows, less those written for a vendor in `without`."""
    rows = [row for row in table if not without.intersection(row[0].split())]
    if not rows:
        return None
    hints = tuple(dict.fromkeys(h for _, _, row_hints in rows for h in row_hints))
    return _Rule(
        "api-token",
        re.compile(before + "(?:" + "|".join(branch for _, branch, _ in rows) + ")" + after),
        hints,
        vendors=tuple(sorted({v for row in rows for v in row[0].split()})),
        rebuild=lambda left_out: _table_rule(table, before, after, left_out),
    )


def _whole_table_rule(table: tuple[tuple[str, str, tuple[str, ...]], ...], before: str, after: str) -> _Rule:
    """Every row of a table in one rule (the tables are not empty)."""
    rule = _table_rule(table, before, after)
    if rule is None:
        raise ValueError("a secrets table has no rows")
    return rule


_RULES: tuple[_Rule, ...] = (
    # A whole PEM block; when its END line is missing (clipped patch), the base64 lines after it.
    _Rule(
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,16000}?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:\r?\n[+\- ]?[ \t]*(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment):.*|)(?=\r?\n|\Z))*)"
        ),
        ("private key",),
    ),
    _Rule(
        "private-key",
        re.compile(r"\bPuTTY-User-Key-File-\d: [\s\S]{0,8000}?Private-MAC: [0-9a-f]+"),
        ("putty-user-key",),
    ),
    _Rule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+"),
        ("hooks.slack",),
        vendors=_v("slack"),
    ),
    _Rule(
        "webhook-url",
        re.compile(r"https://(?:[a-z0-9\-]+\.)?discord(?:app)?\.com/api/webhooks/[A-Za-z0-9_/@\-]+"),
        ("webhook",),
        vendors=_v("discord"),
    ),
    _Rule(
        "webhook-url",
        re.compile(
            r"https://(?:[a-z0-9\-]+\.)?(?:outlook\.office\.com/webhook|[a-z0-9\-]+\.webhook\.office\.com/webhookb2)"
            r"/[A-Za-z0-9_/@\-]+"
        ),
        ("webhook",),
        vendors=_v("microsoft microsoftteams teams"),
    ),
    _Rule(
        "github-token",
        re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        vendors=_v("github"),
    ),
    _Rule(
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
    _Rule(
        "slack-token",
        re.compile(r"\b(?:xox[a-z]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})"),
        ("xox", "xapp-"),
        vendors=_v("slack"),
    ),
    _Rule(
        "stripe-key",
        re.compile(_B + r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})" + _E),
        ("_live_", "_test_", "_prod_", "whsec_"),
        exact=("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"),
        vendors=_v("stripe"),
    ),
    # OpenAI-style: sk-…, sk-proj-…, sk-ant-…, DeepSeek/Moonshot keys of the same shape. At least
    # three digits, so CSS classes like "sk-spinner-fading-circle-wrapper" survive.
    _Rule(
        "openai-key",
        re.compile(r"\bsk-(?=(?:[A-Za-z_\-]*[0-9]){3})[A-Za-z0-9_\-]{20,}"),
        ("sk-",),
        vendors=_v("openai anthropic deepseek moonshot"),
    ),
    _Rule(
        "google-api-key",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
        ("aiza",),
        vendors=_v("google gcp firebase"),
    ),
    _Rule(
        "aws-access-key-id",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        ("akia", "asia", "abia", "acca", "a3t"),
        exact=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        vendors=_v("aws amazon"),
    ),
    _Rule(
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
    _Rule(
        "azure-storage-key",
        re.compile(
            r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=(?P<value>[A-Za-z0-9+/%]{20,}={0,2})"
        ),
        ("accountkey", "sharedaccess", "sig="),
        "value",
        check=lambda v: sum(c.isdigit() for c in v) >= 2 and any(c.isupper() for c in v),
        vendors=_v("azure microsoft"),
    ),
    _Rule(
        "jwt",
        re.compile(_B + r"(?:eyJ|eyA|ewo|ew0|e3s|ewk)[A-Za-z0-9_\-]{6,}=*\.[A-Za-z0-9_\-]{4,}=*\.?[A-Za-z0-9_\-+/]*=*"),
        ("eyj", "eya", "ewo", "ew0", "e3s", "ewk"),
        check=_b64_json_header,
    ),
    _Rule(
        "npm-token",
        re.compile(r":_(?:authToken|auth|password)=[ \t]*(?P<value>[^\s\"'$][^\s\"']*)"),
        ("_auth", "_password"),
        "value",
        vendors=_v("npm"),
    ),
    _Rule(
        "softlayer-key",
        re.compile(r"api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/(?P<value>[a-z0-9]{64})"),
        ("softlayer",),
        "value",
        vendors=_v("softlayer ibm"),
    ),
    _Rule("grafana-token", re.compile(r"\beyJrIjoi[A-Za-z0-9]{50,}=*"), ("eyjrijoi",), vendors=_v("grafana")),
    _Rule("pypi-token", re.compile(r"\bpypi-Ag[A-Za-z0-9_\-]{40,}"), ("pypi-ag",), vendors=_v("pypi")),
    _Rule("npm-token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), ("npm_",), vendors=_v("npm")),
    _Rule(
        "sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,}"), ("sg.",), vendors=_v("sendgrid")
    ),
    _Rule(
        "discord-token",
        re.compile(r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}"),
        (".",),
        check=lambda v: any(c.isdigit() for c in v.split(".")[0]),
        vendors=_v("discord"),
    ),
    _Rule(
        "telegram-bot-token",
        re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E),
        (":aa",),
        exact=(":AA",),
        vendors=_v("telegram"),
    ),
    _Rule(
        "twilio-key", re.compile(r"\b(?:AC|SK)[a-z0-9]{32}\b|\bSK[0-9a-fA-F]{32}\b"), ("ac", "sk"), vendors=_v("twilio")
    ),
    _Rule("mailchimp-key", re.compile(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"), ("-us",), vendors=_v("mailchimp")),
    _Rule(
        "artifactory-token",
        re.compile(r"(?:(?<=[\s=:\"'`])|^)(?:AKC[A-Za-z0-9]{10,}|AP[0-9A-F][A-Za-z0-9]{8,})" + _E, re.M),
        ("akc",) + tuple(f"ap{c}" for c in "0123456789abcdef"),
        check=lambda v: not v.isupper() or any(c.isdigit() for c in v[3:]),
        exact=re.compile(r"A(?:KC|P[0-9A-F])"),
        vendors=_v("artifactory jfrog"),
    ),
    _Rule("square-token", re.compile(r"\bsq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}"), ("sq0",), vendors=_v("square")),
    _Rule(
        "square-token", re.compile(r"\bEAAA[A-Za-z0-9_\-]{60}" + _E), ("eaaa",), exact=("EAAA",), vendors=_v("square")
    ),
    _Rule(
        "huggingface-token",
        re.compile(r"\b(?:hf_|api_org_)[A-Za-z]{34}" + _E),
        ("hf_", "api_org_"),
        exact=("hf_", "api_org_"),
        vendors=_v("huggingface"),
    ),
    _Rule("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{30,}"), ("sk-ant-",), vendors=_v("anthropic")),
    _Rule("age-secret-key", re.compile(r"AGE-SECRET-KEY-1[A-Z0-9]{58}"), ("age-secret-key-",), vendors=_v("age")),
    _whole_table_rule(_PREFIXED_TABLE, _B, _E),
    # Any short vendor prefix, then a long random tail mixing upper, lower and digits
    # (pplx-…, ntn_…, pnu_…, rdme_…, sm_pat_…, HRKU-…, ico-…): the tail alone is what no code is.
    _Rule(
        "api-token",
        re.compile(
            r"(?<![\w\-.~/+])[A-Za-z][A-Za-z0-9]{1,9}[_\-~.](?:[a-z0-9]{1,12}[_\-.]){0,3}[A-Za-z0-9]{20,}"
            r"(?:[_\-][A-Za-z0-9]{4,})*(?![\w\-])"
        ),
        ("_", "-", "~", "."),
        0,
        check=lambda v: _prefixed_token(v),
    ),
    _whole_table_rule(_LAYOUT_TABLE, r"(?<![\w\-])", r"(?![\w\-])"),
    _Rule(
        "password",
        re.compile(r"-(?:(?<=\s-)u|-user)[ \t]+[\"']?[^\s:\"']*:(?P<value>[^\s\"']{4,}|\"[^\"\n]+\"|'[^'\n]+')"),
        ("-u", "--user"),
        "value",
        check=lambda v: not _is_placeholder(v.strip("\"'")),
    ),
    # `-u USER -p PASSWORD` on one command line (docker login, mysql, psexec, …)
    _Rule(
        "password",
        re.compile(
            r"-u(?<![\w\-]-u)[ \t]*(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\-\"'][^\s]*)[ \t]+-p[ \t]*"
            r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s\-\"'][^\s\"']*)"
        ),
        ("-u",),
        "value",
        check=lambda v: _cli_password(v.strip("\"'")),
    ),
    _Rule(
        "auth-header",
        re.compile(
            r"(?i)(?:authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|bot|apikey|sso-key|api-token|digest)[ \t]+)?"
            r"|\b(?:bearer|basic)[ \t]+)"
            r"(?P<value>[A-Za-z0-9._~+/\-:@=]{8,})"
        ),
        ("bearer", "authorization", "basic"),
        "value",
        check=lambda v: (
            not _is_placeholder(v)
            and v.lower() not in _SAFE_VALUES
            and not _readable(v)
            and not _FAKE_MARKER.search(v.lower())
            and (looks_random(v) or (len(v) >= 8 and _classes(v) >= 2 and not _IDENTIFIER.fullmatch(v)))
            and not _REFERENCE.fullmatch(v)
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
class _Shapes:
    """The shape rules in force, sorted by how they are looked for."""

    blocks: tuple[_Rule, ...]  # PEM and PuTTY blocks, first: their base64 lines are runs too
    text: tuple[_Rule, ...]  # the other rules over the whole text
    specific: tuple[_Rule, ...]  # rules over the runs holding one of their hints
    general: tuple[_Rule, ...]  # rules over every candidate run

    @classmethod
    def of(cls, rules: Iterable[_Rule]) -> _Shapes:
        rules = tuple(rules)
        text = tuple(r for r in rules if r.kind in _TEXT_KINDS)
        run = tuple(r for r in rules if r.kind not in _TEXT_KINDS)
        return cls(
            tuple(r for r in text if r.kind == "private-key"),
            tuple(r for r in text if r.kind != "private-key"),
            tuple(r for r in run if not _GENERAL_HINTS.intersection(r.hints)),
            tuple(r for r in run if _GENERAL_HINTS.intersection(r.hints)),
        )

    def without(self, vendors: frozenset[str]) -> _Shapes:
        """The same rules less those written for any of `vendors` (table rows one by one)."""
        kept = []
        for rule in _RULES:
            if rule.rebuild is not None:
                rebuilt = rule.rebuild(vendors)
                if rebuilt is not None:
                    kept.append(rebuilt)
            elif not vendors.intersection(rule.vendors):
                kept.append(rule)
        return _Shapes.of(kept)


_SHAPES = _Shapes.of(_RULES)
_UPPER_RE = re.compile(r"[A-Z]")
_LOWER_RE = re.compile(r"[a-z]")
_DIGIT = re.compile(r"[0-9]")


def _apply(rule: _Rule, text: str, kinds: Counter) -> str:
    def replace(m: re.Match[str]) -> str:
        value = m.group(rule.group)
        if MARK_PREFIX in value or (rule.check is not None and not rule.check(value)):
            return m.group(0)
        kinds[rule.kind] += 1
        start, end = m.span(rule.group)
        return m.group(0)[: start - m.start()] + mark(rule.kind) + m.group(0)[end - m.start() :]

    return rule.pattern.sub(replace, text)


def _redact_shapes(text: str, kinds: Counter, shapes: _Shapes = _SHAPES) -> str:
    lowered = text.lower()  # hints are looked up in the original; redaction only removes text
    for rule in shapes.blocks:
        if any(hint in lowered for hint in rule.hints):
            text = _apply(rule, text, kinds)
    # Vendor tokens carry digits or capitals: look for their hints only in such runs, a fraction
    # of the text (looking for 150 hints in the whole text costs more than everything else).
    runs = _token_runs(text)
    blob_cased = " ".join(m.group(0) for m in runs)
    blob = blob_cased.lower()
    original = text
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
    text = _redact_runs(text, runs if text == original else _token_runs(text), kinds, shapes.general)
    for rule in shapes.text:
        if any(hint in lowered for hint in rule.hints):
            text = _apply(rule, text, kinds)
    return text


def _token_runs(text: str) -> list[re.Match[str]]:
    """The runs of `text` with a digit or a capital (or no letter): names, paths and words are not."""
    found = []
    for m in _RUN.finditer(text):
        run = m.group(0)
        if not run.islower() or _DIGIT.search(run):
            found.append(m)
    return found


# A stretch of 20+ letters and digits that is not lowercase hex.
_NOT_HASH_STRETCH = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]{20})[A-Za-z0-9]*?[g-zA-Z]")


def _redact_runs(text: str, runs: list[re.Match[str]], kinds: Counter, rules: tuple[_Rule, ...]) -> str:
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


# user:password@ in any URL (https, postgres, redis, amqp, …); the user name is kept.
_URL_CREDENTIALS = re.compile(
    # from "://": a literal start is found fast; the password runs to the last @ (p@ss@host)
    r"://[^\s:/@'\"`<>]*:(?P<value>[^\s/'\"`<>]{1,200})@"
)


# A token as the URL's user name, no password: https://ghx_Tq8…@host/repo.git
_URL_TOKEN_USER = re.compile(r"://(?P<value>[A-Za-z0-9_\-.~]{16,200})@")


def _redact_url_credentials(text: str, kinds: Counter) -> str:
    if "://" not in text:
        return text

    def replace(m: re.Match[str]) -> str:
        value = m.group("value")
        if _is_placeholder(value) or value.lower() in _SAFE_VALUES or _placeholder_words(value):
            return m.group(0)
        kinds["url-password"] += 1
        return m.group(0)[: m.start("value") - m.start()] + mark("url-password") + "@"

    def replace_user(m: re.Match[str]) -> str:
        if not strongly_random(m.group("value")):
            return m.group(0)
        kinds["url-token"] += 1
        return "://" + mark("url-token") + "@"

    return _URL_TOKEN_USER.sub(replace_user, _URL_CREDENTIALS.sub(replace, text))


def _cli_password(value: str) -> bool:
    """The value of `-p` after `-u USER`: not a port, a version, a variable or a placeholder."""
    return not (
        _is_placeholder(value) or _NUMBER.fullmatch(value) or _VERSION.fullmatch(value) or value.lower() in _SAFE_VALUES
    )


# =============================================================================================
# Context: a value whose name says credential
# =============================================================================================
#
# A name is split into words (snake, kebab, dots, camelCase). It names a credential when one of
# its words is a credential word and no later word turns it into something else (password_field,
# token_url, max_tokens). Strong words (password, secret, token, api key…) accept any literal that
# is not code, a path or a placeholder; the weak ones (key, auth, id, …) only values that look
# random. Each line is looked at only when it contains one of _CONTEXT_HINTS.

_STRONG_WORDS = frozenset(
    """
password passwd passphrase passcode pwd pw pass passwort contrasena secret secrete secrets token
credential credentials apikey bearer privatekey clientsecret accesskey secretkey authtoken accesstoken
refreshtoken apitoken authkey signingkey encryptionkey masterkey sessionkey webhooksecret pat
""".split()
)
_WEAK_WORDS = frozenset("key auth api cred creds cookie sas hmac login access private license licence".split())
# Two-word names that read as one credential word.
_PAIRS = {
    ("api", "key"): "apikey",
    ("private", "key"): "privatekey",
    ("client", "secret"): "clientsecret",
    ("access", "key"): "accesskey",
    ("secret", "key"): "secretkey",
    ("auth", "token"): "authtoken",
    ("access", "token"): "accesstoken",
    ("refresh", "token"): "refreshtoken",
    ("api", "token"): "apitoken",
    ("auth", "key"): "authkey",
    ("signing", "key"): "signingkey",
    ("encryption", "key"): "encryptionkey",
    ("master", "key"): "masterkey",
    ("session", "key"): "sessionkey",
    ("client", "id"): "clientid",
    ("app", "secret"): "clientsecret",
    ("app", "key"): "apikey",
    ("consumer", "key"): "apikey",
    ("consumer", "secret"): "clientsecret",
    ("account", "key"): "accesskey",
    ("webhook", "secret"): "webhooksecret",
}
# Words after the credential word that make the name something else.
_AFTER_NOT_SECRET = frozenset(
    """
name names file files path paths dir directory url uri urls endpoint host env var vars variable field fields
length len size min max count counts limit type types kind header headers param params label labels prompt hint
regex re pattern policy policies required input inputs reset expiry expires expiration expire ttl timeout
provider providers manager store helper helpers source format mode cache column col index idx prefix suffix
style class error errors message msg text placeholder help description desc template schema validator
validation scheme location config configs settings option options enabled enable disabled set setter getter
fn func function callback handler handlers id ids hash hashed hasher digest salt len file_path usage used
strength confirm confirmation changed change update updated ref reference lookup key_id method methods flow
generator factory loader parser reader writer encoder decoder service client request response resp req res
cls model models form view views module test tests spec mock dummy example sample length bytes bits
policy rotation version mgr obj object struct map dict list tuple array int bool count
budget budgets price cost costs rate window chars char start end begin pos offset ids prob probs logprob
logprobs embedding embeddings vocab vocabs usage proxy server gateway base docs spec route router content contents
""".split()
)
# Words before the credential word that make the name something else (max_tokens, num_tokens …).
_BEFORE_NOT_SECRET = frozenset(
    """
max min num n total count input output prompt completion reasoning cached cache sort primary foreign partition
hash dict map cache_key lookup row column unique composite group public publishable pub csrf xsrf next
page pagination continuation cursor sync idempotency dedup dedupe ssh_public gpg_public ice per
""".split()
)
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CONTEXT_HINTS = (
    "pass",
    "pw",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "bearer",
    "api",
    "cookie",
    "sas",
    "hmac",
    "client",
    "pat",
    "contrase",
    "login",
    "access",
    "private",
    "licen",
)


@lru_cache(maxsize=8192)
def name_strength(name: str) -> tuple[int, str]:
    """(0 none / 1 weak / 2 strong, kind) for a variable, key, flag or element name."""
    found = _name_strength(name)
    if not found[0] and _CAPITALS_THEN_LOWER.search(name):
        # `packagecloudPRIVATEkey`: camelCase reads PRIVAT + Ekey; read the capitals as one word
        found = _name_strength(_CAPITALS_THEN_LOWER.sub(lambda m: "_" + m.group(1).lower() + "_" + m.group(2), name))
    return found


_CAPITALS_THEN_LOWER = re.compile(r"([A-Z]{2,})([a-z])")


def _name_strength(name: str) -> tuple[int, str]:
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    if not words:
        return 0, ""
    merged: list[str] = []
    i = 0
    while i < len(words):
        pair = (words[i], words[i + 1]) if i + 1 < len(words) else None
        if pair in _PAIRS:
            merged.append(_PAIRS[pair])
            i += 2
            continue
        merged.append(words[i])
        i += 1
    best, best_at = 0, -1
    for at, word in enumerate(merged):
        strength = 2 if word in _STRONG_WORDS else 1 if (word in _WEAK_WORDS or word == "clientid") else 0
        if not strength and (inner := _inner_credential(word)):
            merged[at], strength = inner, 2  # acmeapisecretkey, zorbtokenvalue: one word holding one
        elif not strength and len(word) > 5 and word.endswith("key") and not word[:-3].endswith(_INNER_NOT_BEFORE):
            merged[at], strength = "key", 1  # querykey, deploykey: weak, as `key` is
        if strength and strength >= best:
            best, best_at = strength, at
    if not best:
        return 0, ""
    word = merged[best_at]
    after = merged[best_at + 1 :]
    if any(w in _AFTER_NOT_SECRET or w.endswith("tokens") for w in after):
        return 0, ""
    if word in ("access", "private") and after:
        return 0, ""  # `uv-private-pypackage`, `access_log`: only a name ending in the word names a credential
    if word == "pat" and (len(merged) == 1 or after):
        return 0, ""  # a bare or inner "pat" is a pattern or a person
    if best_at and merged[best_at - 1] in _BEFORE_NOT_SECRET:
        return 0, ""
    if word == "pw" and best_at == 0 and len(merged) > 1:
        return 0, ""
    return best, _kind_of(word)


# A credential word inside a longer lowercase word (`acmeapisecretkey`, `ZORBTOKEN`): what may
# follow it and still name the credential itself (not `tokenizer`, `secretary`, `passwordless`).
_INNER_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credential", "credentials")
_INNER_SUFFIXES = frozenset("key value val str string b64 base64 hex raw".split()) | {""}
_INNER_NOT_BEFORE = tuple(w for w in _BEFORE_NOT_SECRET if len(w) >= 3)


def _inner_credential(word: str) -> str:
    for cred in _INNER_WORDS:
        at = word.rfind(cred)
        if at > 0 and word[at + len(cred) :] in _INNER_SUFFIXES and not word[:at].endswith(_INNER_NOT_BEFORE):
            return cred
    return ""


def _kind_of(word: str) -> str:
    if word.startswith("pass") or word in ("pwd", "pw", "contrasena", "passwort"):
        return "password"
    if "token" in word or word in ("bearer", "pat"):
        return "token"
    if word in (
        "apikey",
        "accesskey",
        "authkey",
        "key",
        "api",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "sessionkey",
        "privatekey",
    ):
        return "api-key"
    if word == "clientid":
        return "client-id"
    return "secret"


# name <op> value. The name is the last identifier-like run before the operator (dots, dashes
# and a closing quote allowed: `spring.datasource.password`, `--api-key`, `"client_secret"`).
_ASSIGN = re.compile(
    r"(?P<name>[A-Za-z_$@][A-Za-z0-9_$.\-]*)(?:\[[^\]\n]{0,20}\]|[ \t]+\d{1,3}(?=[ \t]*:))?[\"'`]?"
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w\[\], .|?]*?(?=[ \t]*=[^=]))?"  # a type annotation before `=`
    r"(?:[ \t]+(?:string|String|str)\b)?"  # Go: var name string = "…"
    r"[ \t]*(?P<op>:{1,3}=|=>|\?=|\.=|\|\|=|!==|===|!=|==|=(?![=>])|(?<!:):(?![:/])|,(?=[ \t]*[\"'`])|\(|->|(?<=[A-Za-z0-9\"'])[ \t](?=[ \t]*[\"'`@])"
    r"|(?<=[ \t])(?:-|\||is)(?=[ \t])|(?<=[A-Za-z0-9])[ \t](?=[ \t]*[A-Za-z0-9+/{]))"
    r"[ \t]*(?:[@$](?=[\"'`])|[A-Za-z]{1,2}(?=[\"']))?"  # ObjC @"…", Python r"…" / b'…' / f"…"
    r"[ \t]*(?:\"\"(?=\")|''(?='))?"  # the first two quotes of \"\"\"…\"\"\" or '''…'''
    r"[ \t]*(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,4000})\""
    r"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,4000})'"
    r"|`(?P<bq>[^`\r\n]{1,4000})`"
    r"|(?P<bare>[^\s\"'`,;(){}\[\]<>=#:][^\s\"'`;]{0,4000}))"
)
# --some-api-key VALUE on a command line
_FLAG = re.compile(
    r"(?<![\w\-])--?(?P<name>[A-Za-z][\w\-.]*)[ \t]+(?:\"(?P<dq>[^\"\n]{1,400})\"|'(?P<sq>[^'\n]{1,400})'"
    r"|(?P<bare>[^\s\"'`\-][^\s\"'`]{0,400}))"
)
# "value" == name (comparisons written the other way round)
_REVERSED = re.compile(
    r"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,400})\"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,400})')[ \t]*"
    r"(?:!==|===|!=|==)[ \t]*(?P<name>[A-Za-z_$][A-Za-z0-9_$.\-]*)"
)
# <password>value</password>, <secret>…</secret>; the value may sit on the next line.
_XML = re.compile(
    r"<(?P<name>[A-Za-z0-9_][\w.\-:]*)(?:[ \t][^<>\n]*)?>[ \t]*(?:\r?\n[+\- ]?[ \t]*)?"
    r"(?P<xml>[^<>\s][^<>\n]{0,400}?)[ \t]*(?:\r?\n[+\- ]?[ \t]*)?</(?P=name)>"
)
# <add key="ApiKey" value="…"/>, name="password" value="…"
_ATTR_PAIR = re.compile(
    r"(?i)\b(?:key|name|id)=[\"'](?P<name>[^\"'\n]{1,80})[\"'][ \t]*value=(?:\"(?P<dq>[^\"\n]{1,400})\""
    r"|'(?P<sq>[^'\n]{1,400})')"
)

_SAFE_VALUES: frozenset[str] = frozenset(
    """
none null nil true false undefined required optional yes no on off empty str string int bytes bool boolean
float number any object secretstr text char varchar password secret token redacted self this default env
environment read write read-write readwrite admin user root guest public private basic bearer digest oauth
oauth2 jwt api key apikey auth hidden masked sensitive secure insecure unknown missing invalid valid value
string? str|none changeme placeholder foo bar baz qux foobar foo-bar quux secret-token secret-key
api-key api_key access-token auth-token inherit scrubbed example test testing dummy fake mock sample demo todo fixme tbd xxx
""".split()
)
_PROSE_OR_CODE = re.compile(
    r"\b(?:the|is|are|was|be|your|you|of|to|for|a|an|this|that|not|if|else|elif|in|return|await|lambda|new|then"
    r"|match|from|import|def|fn|let|const|var|none|null|true|false|must|should|will|can|use|enter|please)\b"
    r"|[()\[\]{}=<>]|\.\w+\(|%s|%\(|\{\}|\{0\}"
)
_SPACED_VALUE = re.compile(r"[A-Za-z0-9][\w@#$%^&*!?.,'+-]*(?: [\w@#$%^&*!?.,'+-]+){1,5}")
_PLAIN_WORDS = re.compile(r"[a-z]+(?: [a-z]+){1,5}")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_IDENTIFIER: re.Pattern[str] = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE: re.Pattern[str] = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|->|::|\?\.)[A-Za-z_$][\w$]*)+(?:\(\))?")
_ENV_VAR_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORDS_ID = re.compile(r"[a-z]+(?:[_\-.][a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+")
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+.][A-Za-z0-9.\-]{1,40})?")
_MASKED = re.compile(r"[*•]+(?:[/\-._: ]+[*•]+)*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_TEMPLATE = re.compile(
    r"\$\{[^}]*\}|\$\(\([^)]*\)\)|\$\([^)]*\)|\{\{.*?\}\}|\{%.*?%\}|%\([\w.]+\)[sd]|%[A-Z_]+%|\$[A-Za-z_][\w.]*"
    r"|<[A-Za-z_][\w .\-]*>|\{[A-Za-z_][\w.]*\}|\[[A-Z_ ]+\]|@[A-Z_]+@"
)
_TEMPLATE_INSIDE = re.compile(
    r"\$\{[A-Za-z_][\w.]*(?:\}|:-|:=|:\?)|(?<!\{)\{[a-z_][a-z0-9_.]*(?:\[[\w'\"]+\])?\}(?!\})|\{\{[ \t]*[\w.|() ]+[ \t]*\}\}|\$\([\w .\-]+\)|\$[A-Z_]{3,}\b|^\$[a-z_]\w*$"
)
_COMMENT_OR_EOL = re.compile(r"[ \t]*(?:[#;]|//|/\*|$)")
_FLAG_NAME = re.compile(r"--?[A-Za-z]")


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    if not v or MARK_PREFIX in v or len(set(v.replace("-", "").replace("_", ""))) <= 1:
        return True  # "", ****, xxxx, ----
    if _MASKED.fullmatch(v):
        return True  # ****/**/**, ••••-••••: a value shown masked
    if _TEMPLATE.fullmatch(v) or _TEMPLATE_INSIDE.search(v):
        return True
    low = v.lower()
    return bool(
        re.fullmatch(
            r"(?:your|my|insert|enter|put|replace|add)[-_ ]?.*|.*[-_ ](?:here|goes-here)|x{3,}.*|\.{3}.*|…", low
        )
    )


# Prefixes of ids that APIs hand out (messages, requests, tool calls, Stripe objects…): random, public.
_ID_PREFIXES = frozenset(
    """
msg chatcmpl req request call resp response run file toolu srvtoolu cus ch pi pm evt in sub prod price txn
thread asst batch ft org proj user item rs fc ws img vs cmpl id uuid obj comp gen job task trace span step
sess conv chat tool act acct ba card src tok py re seti si cs ii il po tr ic ipi event mcptoolu
toolu srvtoolu tc tx rsn enc sha1 sha224 sha256 sha384 sha512 md5 blake2b blake3 xxh3 container tooluse
""".split()
)


def _prefixed_token(token: str) -> bool:
    """`pplx-…`, `dp.st.dev.…`, `live_126031192_…`, `github_pat_11A…_zLv…`: a short prefix, maybe
    a word or a number, then a long part random beyond doubt (not an id that APIs hand out)."""
    parts = re.split(r"[_\-~.]", token)
    prefix = parts[0].lower()
    tail = max(parts[1:], key=len)
    if prefix in _ID_PREFIXES or prefix.endswith(("id", "toolu", "call")) or len(tail) < 20:
        return False
    if _wordy_identifier(tail):
        return False  # `pytest.PytestRemovedIn10Warning`: a module and a class made of words
    return _classes(tail) == 3 and _entropy(tail) >= 3.5 and _alternates(tail)


_FAKE_MARKER: re.Pattern[str] = re.compile(
    r"fake|dummy|example|placeholder|sample|mock|redacted|not[-_]?a[-_]?real|(?<![a-z])test"
)
_READABLE_PART = re.compile(r"[0-9]?[a-z]+[0-9]{0,3}|[A-Z][a-z]+|[A-Z]+|[0-9]{1,8}|")


def _wordy(value: str) -> bool:
    """Only words and short numbers, whatever joins them."""
    return all(_READABLE_PART.fullmatch(p) for p in re.split(r"[-_.: #]", value))


def _wordy_identifier(value: str) -> bool:
    """`ConnectionString_B2B`, `userAccountKey2`: an identifier made of words and short numbers
    (random text breaks into many short pieces, and its long pieces lack vowels)."""
    if _IDENTIFIER.fullmatch(value) is None or _HEX.fullmatch(value):
        return False
    words = _NAME_WORD.findall(value)
    return len(words) <= len(value) / 4 and all(
        (w.isdigit() and len(w) <= 4) or (w.isalpha() and (len(w) <= 3 or any(c in "aeiouyAEIOUY" for c in w)))
        for w in words
    )


def _readable(value: str) -> bool:
    """Lowercase words, Capitalised words and short numbers joined by - _ . : — something a person wrote."""
    parts = re.split(r"[-_.: ]", value)
    return (
        len(parts) > 1
        and all(_READABLE_PART.fullmatch(p) and len(p) <= 20 for p in parts)
        and not any(p.isupper() and len(p) > 6 for p in parts)
    )


_PLACEHOLDER_WORD = re.compile(r"secret|pass|token|key|test|fake|example|dummy|changeme|super|sample|demo")


def _placeholder_words(value: str) -> bool:
    """`index-secret`, `super-secret`, `pass`: a person's stand-in for a password in docs and tests."""
    low = value.lower()
    return (_readable(value) or low.isalpha()) and _PLACEHOLDER_WORD.search(low) is not None


def _alternates(value: str) -> bool:
    """Random text changes character class often; identifiers and words do not."""
    changes = sum(1 for a, b in itertools.pairwise(value) if (a.isdigit(), a.isupper()) != (b.isdigit(), b.isupper()))
    return changes / len(value) >= 0.3


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def looks_random(value: str) -> bool:
    """A token-like value: long enough, mixing character classes, not a word or identifier."""
    n = len(value)
    if n < 12:
        return False
    if _HEX.fullmatch(value):
        return n >= 16 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    classes = _classes(value)
    if classes >= 3 or (classes == 2 and any(c.isdigit() for c in value)):
        return _entropy(value) >= 3.0
    return False


def _value_is_secret(value: str, strength: int, quoted: bool, op: str, name: str) -> bool:
    v = value.strip()
    if "%" in v and _PERCENT.search(v):
        v = unquote(v).strip("[]'\" ")  # a URL-encoded value: client_id=%5B%27scrubbed%27%5D
    if _braced_random(v):
        return True  # Jenkins' credentials.xml: <secret>{AQAAABAAAAAQ…}</secret>
    if _is_placeholder(v):
        return False
    low = v.lower().strip(":?*")
    if low in _SAFE_VALUES or (
        low.startswith(("fake", "dummy", "test-", "test_", "example", "sample")) and not looks_random(v)
    ):
        return False
    if _FAKE_MARKER.search(low) and (len(v) < 32 or not looks_random(v)):
        return False  # test-key-123, xai-fake_api_key_1234, placeholder-token
    if "://" in v or v.startswith(("/", "./", "../", "~/", "\\\\")) or re.match(r"[A-Za-z]:\\", v):
        return False  # URLs (credentials in them are handled apart) and paths
    if _VERSION.fullmatch(v) or _ENV_VAR_NAME.fullmatch(v) or _DATE.fullmatch(v):
        return False
    if v.endswith("*") and not looks_random(v.rstrip("*")):
        return False  # a glob: [[ "$HF_TOKEN" != hf_* ]]
    if "@sha256:" in v or v.startswith("\\"):
        return False  # a pinned image reference; an escape sequence
    if (
        v.startswith("arn:")
        or (v[:1] in "#." and _wordy(v[1:]))
        or ("/" in v and _wordy(v.split("?")[0].replace("/", "-")))
    ):
        return False  # an AWS resource name, a CSS selector (#add-password), a route (cms/sites/passwords)
    if strength == 1 and _readable(v):
        return False  # `Cookie`, `Proxy-Authorization`
    if (
        _UUID.fullmatch(v)
        and strength < 2
        and (len(_NAME_WORD.findall(name)) < 2 or name_strength(name)[1] == "client-id")
    ):
        return False  # an id, not a secret, next to a bare "key" or a client id (but `Heroku key`, `Using Key`)
    has_space = any(c.isspace() for c in v)
    if has_space and quoted and len(v.split()) <= 3 and any(len(p) >= 20 and strongly_random(p) for p in v.split()):
        return True  # a scheme word and a token: "FlyV1 fm1r_…", "Token Tq8…"
    if has_space:
        # "correct horse battery staple" after a password-like name; prose otherwise
        return (
            strength == 2
            and (quoted or op in (":", "="))
            and len(v) >= 8
            and len(v.split()) <= 6
            and _SPACED_VALUE.fullmatch(v) is not None
            and not v.endswith((".", ":", "?", "!", "(", "{", ","))
            and not _PROSE_OR_CODE.search(low)
            and (quoted or _PLAIN_WORDS.fullmatch(v) is not None)
        )
    if _readable(v) and not name_kind_is_password(name):
        return False  # words and numbers (caller-supplied, exchanged-token, azure-key-value-42): not a key
    if _NUMBER.fullmatch(v):
        return strength == 2 and len(v) >= 12 and v.isdigit()
    if strength == 1:
        return looks_random(v) and len(v) >= 16 and not _wordy_identifier(v)
    if looks_random(v):
        return True
    if len(v) < 4:
        return False
    if "/" in v and not quoted:
        return False  # a path or a MIME type
    if re.fullmatch(r"[\w.\-]+\.(?:py|js|ts|json|yaml|yml|toml|txt|md|html|pem|key|crt|env|cfg|ini|sh|lock)", v):
        return False  # a file name
    if _is_code(v) or (_WORDS_ID.fullmatch(v) and max(map(len, re.split(r"[_\-.]", v))) < 20):
        return False  # code (settings.api_key) or a name made of words (real_key, user-password)
    if op in ("==", "!=", "===", "!==", ",", "(") and (v.isidentifier() and not any(c.isdigit() for c in v)):
        return False  # comparisons and arguments: a plain word is a value of the program
    if not quoted:
        if _IDENTIFIER.fullmatch(v) and not any(c.isdigit() for c in v) and v[:1].isupper():
            return False  # a class or constant
        if _IDENTIFIER.fullmatch(v) and op not in (":", "=", ":="):
            return False
    last = re.split(r"[.\-]|->|::", name)[-1].lower()
    return not (v.lower() in (name.lower(), last) or v.lower().replace("_", "") == last.replace("_", ""))


def name_kind_is_password(name: str) -> bool:
    return name_strength(name)[1] in ("password", "secret")


def _value_of(m: re.Match[str]) -> tuple[str, str | None]:
    for group in ("dq", "sq", "bq", "bare", "xml"):
        try:
            value = m.group(group)
        except IndexError:
            continue
        if value is not None:
            return group, value
    return "", None


def _redact_line(line: str, kinds: Counter, found: dict[str, str] | None = None) -> str:
    spans: list[tuple[int, int, str]] = []

    def consider(m: re.Match[str], name: str, op: str) -> None:
        strength, kind = name_strength(name)
        if not strength:
            return
        group, value = _value_of(m)
        if value is None:
            return
        if op == " " and (name.split()[-1].lower() == "pass" or value[:1] in "-[(<"):
            return  # "Pass `--flag`": prose about a flag, not a password
        quoted = group in ("dq", "sq", "bq", "xml")
        if group == "bare":
            value = _trim_bare(value)
            if line[m.start("name") - 1 : m.start("name")] in ("?", "&"):
                value = value.split("&", 1)[0]  # a URL's query: ?token=…&page=2
            if not value or op == "(":
                return
            if _capitals_label(name, op, value):
                start = m.start(group)
                spans.append((start, start + len(value), kind))
                return  # `acme SECRET 4f8a…`, `acme PRIVATE TOKEN ZXC2…`: a label in capitals, then its value
            if op in _LOOSE_OPS and not (len(value) >= 16 and _TOKENISH.fullmatch(value) and looks_random(value)):
                return  # `token - 1`, `secret sauce`: only a random-looking value follows a dash or a space
            if _is_code(value) or value.endswith(("{", "(", "[")):
                return  # a call, an index, an attribute, a block
            if value.startswith(("@", "&", "*", "!", "%", "-", "+")) and not looks_random(value):
                return  # decorators, YAML anchors/aliases/tags, flags
            if _another_assignment(value):
                return  # another assignment: f(api_key=key, http_client=client)
            rest = line[m.start(group) + len(value) :].strip().rstrip(",;")
            if (
                strength == 2
                and op in (":", "=")
                and rest
                and not rest.startswith(("#", "//"))
                and _PLAIN_WORDS.fullmatch(value + " " + rest)
                and _value_is_secret(value + " " + rest, strength, False, op, name)
            ):
                start = m.start(group)
                spans.append((start, start + len(value) + len(line[start + len(value) :].rstrip().rstrip(",;")), kind))
                return  # a multi-word value: `aws_secret_access_key: value with spaces`
            if _IDENTIFIER.fullmatch(value) and not looks_random(value):
                if not _COMMENT_OR_EOL.match(line, m.start(group) + len(value)) or value.startswith("_"):
                    return  # `x = match y {`, `token = token if …`: code, not a literal
                # (a flag's match has no `op` group: `--token VALUE` is judged by the value alone)
                if op == "=" and "op" in m.re.groupindex and line[m.start("op") - 1 : m.start("op")] in (" ", "\t"):
                    return  # `api_key = sentinel` is code; `API_KEY=abcdef` (.env) is a literal
        if (
            quoted
            and value.isalpha()
            and value.islower()
            and len(value) <= 10
            and kind != "password"
            and line[: m.start("name")].rstrip().endswith(("(", ","))
        ):
            return  # f(api_key='first'): a word stands in for a key in a test's call
        if not _value_is_secret(value, strength, quoted, op, name):
            return
        start = m.start(group)
        spans.append((start, start + len(value), kind))

    # `name <op> value`, tried only where a name holding a credential word starts
    lowered = line.lower()
    tried = set()
    for hint in _CONTEXT_PREFILTER.finditer(lowered):
        start = _name_start(line, max(0, hint.start() - 80), hint.start())
        while start < hint.start() and not (line[start].isalpha() or line[start] in "_$@"):
            start += 1
        if start in tried:
            continue
        tried.add(start)
        m = _ASSIGN.match(line, start)
        if m is None or m.end("name") <= hint.start():
            continue
        name, op = m.group("name"), m.group("op")
        label = _LABEL_BEFORE.search(line, max(0, start - 40), start)
        if label and _LABEL_WORDS.fullmatch(name):
            name = label.group(1) + " " + name  # a label of words: `Zorblex API key: …`, `Using Key=…`
        if not (op == ":" and name.startswith("http")):
            consider(m, name, op)
    if "-" in line:
        for m in _FLAG.finditer(line):
            consider(m, m.group("name"), "=")
    if "==" in line or "!=" in line:
        for m in _REVERSED.finditer(line):
            consider(m, m.group("name"), "==")
    if "<" in line:
        for m in _XML.finditer(line):
            consider(m, m.group("name"), "xml")
        if "value=" in line:
            for m in _ATTR_PAIR.finditer(line):
                consider(m, m.group("name"), "=")
    if not spans:
        return line
    spans.sort()
    out, at = [], 0
    for start, end, kind in spans:
        if start < at:
            continue
        out.append(line[at:start])
        out.append(mark(kind))
        kinds[kind] += 1
        if found is not None:
            found[line[start:end]] = kind
        at = end
    out.append(line[at:])
    return "".join(out)


_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_LOOSE_OPS = frozenset((" ", "-", "|", "is"))
_CAPITALS_LABELS = frozenset("SECRET KEY TOKEN PASSWORD APIKEY ACCESS PRIVATE".split())
_LABEL_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{15,}")


def _capitals_label(name: str, op: str, value: str) -> bool:
    """A credential word written in capitals as a label, a space, then one long token: prose says
    'the secret is', code names a constant; only a label reads `SECRET 4f8a…`."""
    if op != " " or name.split()[-1] not in _CAPITALS_LABELS or _LABEL_VALUE.fullmatch(value) is None:
        return False
    if _ENV_VAR_NAME.fullmatch(value):
        return False  # SECRET KEY_ROTATION_PERIOD_DAYS: a constant's name
    if value.isalpha():
        return len(value) >= 20 and len(set(value)) > 10  # letters only: long and varied
    return len(set(value)) > 4


_LABEL_BEFORE = re.compile(r"(?<![\w.\-])([A-Za-z][A-Za-z0-9]*)[ \t]+$")
_LABEL_WORDS = re.compile(r"[A-Za-z][a-z]*")
_B64ISH = re.compile(r"[A-Za-z0-9+/=_\-]+")
_TOKENISH = re.compile(r"[A-Za-z0-9+/=_\-.~:]+")


def strongly_random(value: str) -> bool:
    """Random beyond doubt: 16+ letters and digits mixing upper, lower and digits, changing class
    often, with high entropy — no identifier, word or hash reads like that."""
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    return len(core) >= 16 and _classes(core) == 3 and _entropy(core) >= 3.5 and _alternates(core)


def _is_code(value: str) -> bool:
    """A call, an attribute or a dotted name — unless a dotted part is random (`hvx.Tq8…`)."""
    if not (_CODE_VALUE.match(value) or _REFERENCE.fullmatch(value)):
        return False
    return not any(_random_part(part) for part in re.split(r"\.|->|::|\?\.|\(", value))


def _random_part(part: str) -> bool:
    """No attribute or module name: random beyond doubt, or 20+ letters and digits with plenty of each."""
    if strongly_random(part):
        return True
    digits = sum(c.isdigit() for c in part)
    return part.isalnum() and len(part) >= 20 and 0.2 <= digits / len(part) <= 0.8


def _another_assignment(value: str) -> bool:
    """`key, http_client=client` holds another `name=`; base64 padding (`…MQ==:7f3c`) does not."""
    for m in re.finditer(r"(?:^|(?<=[,&;(\s]))([A-Za-z_][\w.\-]*)=(?!=)", value):
        if not looks_random(m.group(1)):
            return True
    return False


def _braced_random(value: str) -> bool:
    """`{AQAAABAAAAAQ…=}`, `{AQAAABAAAA 7Gm2Q9…}`: base64 pieces in braces, random together."""
    if len(value) < 18 or value[0] != "{" or value[-1] != "}":
        return False
    pieces = value[1:-1].split()
    joined = "".join(pieces)
    return bool(pieces) and all(_B64ISH.fullmatch(p) for p in pieces) and strongly_random(joined)


_CODE_VALUE = re.compile(r"[A-Za-z_$][\w$.:]*[(\[<]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")


def _trim_bare(value: str) -> str:
    """An unquoted value without the punctuation that ends its statement: `abc,` `abc)` `abc;`."""
    while value and value[-1] in ".,;:)]}>":
        closer = value[-1]
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}.get(closer)
        if opener and value.count(opener) >= value.count(closer):
            break
        value = value[:-1]
    return value


_CONTEXT_PREFILTER = re.compile("|".join(_CONTEXT_HINTS))  # run over the lowercased text: re.I is 9x slower


_NAME_CHARS = re.compile(r"[A-Za-z0-9_$.\-]*")
_NAME_CHARS_BACK = re.compile(r"[A-Za-z0-9_$.\-]*$")


# Both patterns match (maybe empty) wherever they are tried, so the fallbacks below never apply.
def _name_start(text: str, lo: int, hi: int) -> int:
    """Where the run of name characters ending at `hi` begins, no further back than `lo`."""
    m = _NAME_CHARS_BACK.search(text, lo, hi)
    return m.start() if m else hi


def _name_end(text: str, pos: int) -> int:
    """Where the run of name characters starting at `pos` ends."""
    m = _NAME_CHARS.match(text, pos)
    return m.end() if m else pos


# A hint that is a credential word by itself (every hint but client, pat, contrase, unless oddly
# cased: `sAs`) makes its line wanted whatever the name around it, and the scan goes on at the
# next line: one regex search per wanted line rather than one Python step per hit.
_SELF_HINTS = frozenset(h for h in _CONTEXT_HINTS if name_strength(h)[0])


def _lines_with_credential_names(text: str) -> list[int]:
    """Indexes of the lines holding a name that says credential: the same lines as
    _lines_with_credential_names_per_hit, found with fewer steps."""
    found: list[int] = []
    lowered = text.lower()  # same length: lower() keeps ASCII offsets
    counted_to, line_index, pos = 0, 0, 0
    search = _CONTEXT_PREFILTER.search
    while (m := search(lowered, pos)) is not None:
        start, end = m.span()
        line_start = text.rfind("\n", 0, start) + 1
        if m.group(0) in _SELF_HINTS and name_strength(text[start:end])[0]:
            wanted = True
        else:
            name_start = _name_start(text, max(line_start, start - 80), start)
            name_end = _name_end(text, end)
            wanted = bool(name_strength(text[name_start:name_end].strip(".-"))[0] or name_strength(text[start:end])[0])
        if not wanted:
            pos = end
            continue
        line_index += text.count("\n", counted_to, line_start)
        counted_to = line_start
        found.append(line_index)
        pos = lowered.find("\n", end)  # the rest of a wanted line does not matter
        if pos < 0:
            break
    return found


def _lines_with_credential_names_per_hit(text: str) -> list[int]:
    """Indexes of the lines holding a name that says credential: a hint word found by one scan of
    the text, widened to the name around it, and that name judged by name_strength (cached)."""
    found: list[int] = []
    last_line_start, counted_to, line_index = -1, 0, 0
    for m in _CONTEXT_PREFILTER.finditer(text.lower()):  # same length: lower() keeps ASCII offsets
        start = m.start()
        line_start = text.rfind("\n", 0, start) + 1
        if line_start == last_line_start:
            continue
        name_start = _name_start(text, max(line_start, start - 80), start)
        name_end = _name_end(text, m.end())
        if name_strength(text[name_start:name_end].strip(".-"))[0] or name_strength(text[start : m.end()])[0]:
            last_line_start = line_start
            line_index += text.count("\n", counted_to, line_start)
            counted_to = line_start
            found.append(line_index)
    return found


# `access_token:` at the end of a line, its value alone on the next (YAML, wrapped code)
_DANGLING = re.compile(r"^[+\- ]?[ \t]*(?:- )?[\"']?[A-Za-z_][\w.\-]*[\"']?[ \t]*(?::|=|:=|=>)[ \t]*$")  # a lone key
# a short line of words naming the value on the next line: `Eventbrite private access key`
_LABEL_LINE = re.compile(r"[+\- ]?[ \t]*(?:(?:#|//|\*)[ \t]*)?[A-Za-z][A-Za-z ]{0,60}[ \t]*")
_LONE_VALUE = re.compile(r"[+\- ]?[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'#]{8,400})(?P=q)[,;]?[ \t]*")


def _redact_next_line_value(lines: list[str], i: int, kinds: Counter, found: dict[str, str]) -> None:
    m = _LONE_VALUE.fullmatch(lines[i + 1])
    if m is None:
        return
    quote, value = m.group("q"), m.group("value")
    if not looks_random(value):
        return  # `if token:` then `continue` is code; a value alone on its line must look random
    seen: dict[str, str] = {}
    _redact_line(lines[i].rstrip() + " " + quote + value + quote, Counter(), seen)
    if value in seen:
        kinds[seen[value]] += 1
        found[value] = seen[value]
        lines[i + 1] = lines[i + 1].replace(value, mark(seen[value]), 1)


def _redact_context(text: str, kinds: Counter) -> str:
    wanted = _lines_with_credential_names(text)
    if not wanted:
        return text
    lines = text.split("\n")
    found: dict[str, str] = {}  # value -> kind, of every value withheld
    # An XML element split over three lines: join the value line to its tags.
    for i in wanted:
        line = lines[i]
        if line.rstrip().endswith(">") and i + 2 < len(lines) and "</" in lines[i + 2] and "<" in line:
            joined = _redact_line("\n".join(lines[i : i + 3]), kinds, found)
            if MARK_PREFIX in joined and joined != "\n".join(lines[i : i + 3]):
                lines[i : i + 3] = joined.split("\n")
                continue
        lines[i] = _redact_line(line, kinds, found)
        if i + 1 < len(lines) and (_DANGLING.search(line) or _LABEL_LINE.fullmatch(line)):
            _redact_next_line_value(lines, i, kinds, found)
    text = "\n".join(lines)
    # A value once known to be a secret is one wherever else it appears (`token = 'X' | 'X'`,
    # the same key pasted again further down, in a message after the diff).
    for value, kind in found.items():
        if len(value) >= 8 and looks_random(value) and not any(c.isspace() for c in value) and value in text:
            kinds[kind] += text.count(value)
            text = text.replace(value, mark(kind))
    return text


# =============================================================================================
# A value random beyond doubt, given to any name
# =============================================================================================
#
# `wandb 2e11kyDIiLGCGkHX7pAdSvKuqrEcZtYf82Hr`, `posthog = phx_WQV1…`, `AcmeClient("Tq8…")`: no
# credential word, only a vendor's name — a name no rule can know. Not after `name:`: YAML and
# JSON records (recorded API sessions) give random data such names line after line. What ordinary code gives a name
# and is as random as that is an id an API handed out (`id: msg_01…`, `call_id: call_…`,
# `responseId: …`), a signature or an encrypted blob (`thoughtSignature`, `encrypted_content`), a
# hash or a URL: those names and prefixes are left alone. Hex, UUIDs and values that read as
# words are never taken here: SHAs and ids are everywhere (they need a credential word).

# (a run may start a diff's line right after its + or - marker)
_RANDOM_RUN = re.compile(r"(?<![\w/.~])(?<![^\n][+\-])[A-Za-z0-9][A-Za-z0-9+/_\-.~]{19,199}=*(?![\w+/=\-~])")
_NAME_OP_BEFORE = re.compile(
    r"(?<![\w.\-])(?P<name>[A-Za-z][A-Za-z0-9_\-.]{0,40})[\"']?(?:[ \t]*(?:=|:=|=>)[ \t]*|[ \t]+|\()[\"'`]?$"
)
# Last words of names whose random values are not secrets.
_NOT_SECRET_NAMES = frozenset(
    """
id ids uuid guid signature signatures sig index hash hashes digest sha commit rev revision ref nonce etag checksum
cursor fingerprint salt iv version content contents data blob image base64 b64 encrypted ciphertext hmac
https http ftp file path url uri type alias class struct def fn func let const var val new return import from
""".split()
)


def _named_random(value: str, name: str) -> bool:
    core = value.rstrip(".")
    if "/" in core or "+" in core or "=" in core:
        return False  # base64 data (`audio: 9//o/+b/…`), a path, a query: a key without a name has none
    if not strongly_random(core) or _wordy_identifier(core) or _is_placeholder(core):
        return False
    if all(_wordy_identifier(part) for part in core.split(".")) or _mostly_words(core):
        return False  # pytest.PytestRemovedIn10Warning, CPyList_GetItemInt64: names made of words
    first = re.split(r"[_\-~.]", core, maxsplit=1)[0].lower()
    if first in _ID_PREFIXES or first.endswith(("id", "call")):
        return False  # an id an API handed out: msg_01…, call_…, toolu_…, chatcmpl-…
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    return bool(words) and words[-1] not in _NOT_SECRET_NAMES and not (set(words) & {"id", "hash", "signature"})


# A credential word glued to a vendor's name and to its value in one word:
# `capsulecrm-SECRET-bu9J…`, `holidayapiKEY-123e4567-…`, `gitter-secret-…`, `versioneyeACCESS-…`.
# (matched on the lowercased run: re.I is several times slower)
_GLUED_WORD = re.compile(r"(?:secret|token|key|access|private|password|passwd|apikey)s?(?=[-_.][a-z0-9])")
# a glued value is letters, digits and dashes (`key_id=PROBE_KEY` is more words of the name)
_GLUED_VALUE = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def _glued_secret(run: str, lowered: str) -> int:
    """Where the value starts in a run holding `name-credential-value`, or -1."""
    for g in reversed(list(_GLUED_WORD.finditer(lowered))):
        name, rest = run[: g.end()], run[g.end() + 1 :].rstrip(".")
        if len(rest) < 16 or run[g.end()] in ":=" or not _GLUED_VALUE.fullmatch(rest) or not name_strength(name)[0]:
            continue  # (`name=value` and `name: value` are the context detector's: not glued)
        if _UUID.fullmatch(rest) or (
            looks_random(rest) and not _wordy_identifier(rest) and not _readable(rest) and not _is_placeholder(rest)
        ):
            return g.end() + 1
    return -1


_WORD_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _mostly_words(value: str) -> bool:
    """Most letters in pieces of three or more with a vowel (`testVecI64ForLoop_64bit`): a name a
    person wrote; random text breaks into short pieces and consonant runs."""
    pieces = _WORD_PIECE.findall(value)
    letters = sum(len(p) for p in pieces)
    worded = sum(len(p) for p in pieces if len(p) >= 3 and any(c in "aeiouyAEIOUY" for c in p))
    return letters > 0 and worded >= 0.5 * letters


def _may_be_strongly_random(run: str) -> bool:
    """Upper case, lower case and a digit, and none of base64's / + = (see _named_random)."""
    return (
        run != run.lower()
        and run != run.upper()
        and "/" not in run
        and "+" not in run
        and "=" not in run
        and _DIGIT.search(run) is not None
    )


def _redact_named_random(text: str, kinds: Counter) -> str:
    spans = []
    named: dict[str, list[tuple[int, int, str]]] = defaultdict(list)  # name -> (start, end, value)
    for m in _RANDOM_RUN.finditer(text):
        run = m.group()
        lowered = run.lower()
        glued = _glued_secret(run, lowered) if _GLUED_WORD.search(lowered) else -1
        if glued > 0:
            spans.append((m.start() + glued, m.start() + len(run.rstrip("."))))
            continue
        if not _may_be_strongly_random(run):
            continue  # (cheap string tests first: most runs are paths and identifiers)
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = _NAME_OP_BEFORE.search(text, max(line_start, m.start() - 60), m.start())
        if before is None or MARK_PREFIX in text[line_start : m.start()]:
            continue
        if _named_random(m.group(), before.group("name")):
            value = m.group().rstrip(".")
            named[before.group("name").lower()].append((m.start(), m.start() + len(value), value))
    for found in named.values():
        # One name given three different random values is a stream of data (`audio: …` chunks of
        # a recorded session, one record after another), not a credential: a file holds one key
        # under a name, maybe repeated.
        if len({value for _, _, value in found}) < 3:
            spans.extend((start, end) for start, end, _ in found)
    spans.sort()
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(mark("token"))
        kinds["token"] += 1
        at = end
    out.append(text[at:])
    return "".join(out)
