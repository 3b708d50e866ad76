"""bot/diffs/: token estimate, secret redaction, budgeted diff selection, coverage line and
relevant hunks. Pure code: every test feeds models in and reads the text/coverage a user (or the
LLM) would see.

`make_commit_files(n_files, ...)` builds realistic commits of any size (a module that needs it too
would take it to tests/shared/: test modules import nothing from each other).
"""

from __future__ import annotations

import base64
import hashlib
import random
import re

import pytest

from bot.core.models import Coverage, FileChange
from bot.diffs import (
    CLIP_MIN_TOKENS,
    DiffSelection,
    coverage_line,
    estimate_tokens,
    redact_secrets,
    redact_text,
    relevant_hunks,
    select_diff,
    skip_reason,
)

# =============================================================================================
# A commit generator other tests can import
# =============================================================================================

_WORDS = (
    "user",
    "digest",
    "commit",
    "window",
    "render",
    "token",
    "cache",
    "store",
    "thread",
    "message",
    "schedule",
    "branch",
    "author",
    "summary",
    "channel",
    "retry",
    "limit",
)


def make_patch(
    rng: random.Random, n_lines: int, *, deletion_only_hunk: bool = False, start: int = 1
) -> tuple[str, int, int]:
    """(patch, additions, deletions): unified-diff hunks of Python-looking lines."""
    hunks, additions, deletions, line_no = [], 0, 0, start
    remaining = max(1, n_lines)
    while remaining > 0:
        size = min(remaining, rng.randint(3, 12))
        body = []
        for i in range(size):
            word = rng.choice(_WORDS)
            kind = rng.choice(" +-+") if i else " "
            body.append(f"{kind}    {word}_{rng.randint(0, 999)} = compute_{word}({rng.randint(0, 99)})")
        added = sum(1 for b in body if b.startswith("+"))
        deleted = sum(1 for b in body if b.startswith("-"))
        hunks.append(f"@@ -{line_no},{size - added} +{line_no},{size - deleted} @@ def f_{line_no}():")
        hunks.extend(body)
        additions, deletions = additions + added, deletions + deleted
        line_no += size + rng.randint(5, 40)
        remaining -= size
    if deletion_only_hunk:
        removed = [f"-    legacy_{i} = old_call({i})" for i in range(rng.randint(4, 20))]
        hunks.append(f"@@ -{line_no},{len(removed)} +{line_no},0 @@")
        hunks.extend(removed)
        deletions += len(removed)
    return "\n".join(hunks), additions, deletions


def make_commit_files(
    n_files: int,
    *,
    seed: int = 0,
    max_lines: int = 30,
    special: bool = True,
    deletion_only_share: float = 0.3,
    big_patch_bytes: int = 0,
) -> list[FileChange]:
    """A commit's files: source, config, tests and docs with real-looking patches (some with
    deletion-only hunks); with `special`, also one of each never-shown kind (lockfile, binary,
    generated, vendored, no patch) plus a deleted file and a bare rename, cycling through the
    list; with `big_patch_bytes`, the first file's patch is about that large."""
    rng = random.Random(seed)
    files: list[FileChange] = []
    specials = _special_files() if special else []
    for i in range(n_files):
        if specials and i % 7 == 3:
            files.append(specials[(i // 7) % len(specials)]._replace_path(i))
            continue
        path = _ordinary_path(rng, i)
        patch, adds, dels = make_patch(
            rng, rng.randint(1, max_lines), deletion_only_hunk=rng.random() < deletion_only_share
        )
        files.append(FileChange(path, rng.choice(["modified", "modified", "added"]), adds, dels, patch))
    if big_patch_bytes and files:
        files[0] = _big_file(rng, big_patch_bytes)
    return files


def _ordinary_path(rng: random.Random, i: int) -> str:
    word = rng.choice(_WORDS)
    return rng.choice(
        [
            f"src/{word}/mod_{i}.py",
            f"lib/{word}_{i}.go",
            f"web/{word}{i}.ts",
            f"config/{word}_{i}.yaml",
            f"tests/test_{word}_{i}.py",
            f"docs/{word}_{i}.md",
        ]
    )


def _big_file(rng: random.Random, size: int) -> FileChange:
    lines, total = [], 0
    while total < size:
        line = f"+    value_{len(lines)} = transform_{rng.choice(_WORDS)}(payload[{len(lines)}], retries=3)"
        lines.append(line)
        total += len(line) + 1
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(lines)
    return FileChange("src/huge_module.py", "added", len(lines), 0, patch)


class _Special:
    """A never-shown (or name-only) file template whose path gets a unique index."""

    def __init__(self, path: str, **kwargs):
        self.path, self.kwargs = path, kwargs

    def _replace_path(self, i: int) -> FileChange:
        stem, dot, ext = self.path.rpartition(".")
        return FileChange(path=f"{stem}_{i}{dot}{ext}" if dot else f"{self.path}_{i}", **self.kwargs)


def _special_files() -> list[_Special]:
    return [
        _Special(
            "poetry.lock",
            status="modified",
            additions=400,
            deletions=380,
            patch='@@ -1,3 +1,3 @@\n-name = "a"\n+name = "b"',
        ),
        _Special("assets/logo.png", status="added", patch=None),
        _Special(
            "gen/api_pb2.py", status="modified", additions=2, deletions=1, patch="@@ -1,2 +1,3 @@\n x\n-y\n+z\n+w"
        ),
        _Special("vendor/lib/util.go", status="modified", additions=1, deletions=0, patch="@@ -1 +1,2 @@\n a\n+b"),
        _Special("data/huge_dump.sql", status="modified", additions=90000, deletions=0, patch=None),
        _Special(
            "src/old_module.py",
            status="removed",
            additions=0,
            deletions=57,
            patch="@@ -1,2 +0,0 @@\n-old = 1\n-older = 2",
        ),
        _Special("src/renamed.py", status="renamed", previous_path="src/before.py", patch=None),
    ]


# =============================================================================================
# estimate_tokens
# =============================================================================================

PYTHON_CODE = '''\
def parse_window(text: str, tz: str) -> Window:
    """Parse "2026-01-28" or "2026-01-20..2026-01-22" into a half-open window."""
    start, sep, end = text.partition("..")
    first = _parse_day(start.strip())
    last = _parse_day(end.strip()) if sep else first
    if last < first:
        raise UsageError(f"The range {text!r} ends before it starts.")
    zone = ZoneInfo(tz)
    begin = datetime.combine(first, time.min, zone)
    finish = datetime.combine(last + timedelta(days=1), time.min, zone)
    return Window(start=begin, end=finish, tz=tz, label=text)
'''

ENGLISH_PROSE = (
    "The digest lists yesterday's commits grouped by importance. Each entry explains what changed, "
    "why it matters, and what reviewers should look at first. When the diff is too large for the "
    "model's context, the bot says which files were left out instead of silently analysing a "
    "partial change, so nobody mistakes a clipped review for a complete one."
)

WHITESPACE_DIFF = (
    "@@ -10,12 +10,14 @@ class Renderer:\n"
    "                         if entry.analysis is None:\n"
    "-                            return self._fallback(entry)\n"
    '+                            return self._fallback(entry, reason="no analysis")\n'
    '+\t\t\t\t\tlog.debug("fallback for %s", entry.commit.sha)\n'
    " \n"
    "+    WIDTH          = 80\n"
    "+    MARGIN         = 4\n"
    '+    INDENT         = "    "\n'
    "-    x = 1        \n"
    "+    x = 2                                              \n"
    "+\n"
    "+                                                                        # aligned comment\n"
    "                 return blocks\n"
)

CHINESE_PROSE = (
    "本次提交重构了消息推送模块，将原先分散在各个处理函数中的重试逻辑统一收敛到一个装饰器里。"
    "这样做的好处是减少了重复代码，所有的重试策略都可以通过配置文件集中管理，日志格式也保持一致，"
    "便于排查问题。需要注意的是，旧的配置项已经废弃，升级时请参考迁移文档。"
)

CHINESE_COMMIT = (
    "修复：parse_window 在夏令时切换当天计算的结束时间错误（差一小时）。\n"
    "原因是 datetime.combine 之后又做了一次 astimezone，导致偏移量被重复应用。\n"
    "影响范围：所有设置了 America/New_York 等时区的订阅。"
)

JSON_CONFIG = """\
{
  "name": "digest-bot",
  "version": "0.1.0",
  "scripts": {"test": "pytest -q", "lint": "ruff check ."},
  "engines": {"node": ">=18.17.0"},
  "dependencies": {"@slack/bolt": "^3.17.1", "lodash": "4.17.21"}
}
"""

NUMBERS = "\n".join(", ".join(str((i * 7919 + j * 104729) % 1000000007) for j in range(8)) for i in range(6))
BASE64_BLOB = base64.b64encode(b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(24))).decode()
HEX_HASHES = "\n".join(hashlib.sha1(str(i).encode()).hexdigest() for i in range(12))
EMOJI_LINE = "🔴 high  🟡 medium  🟢 low  ✅ done  🚀 shipped  🐛 bug\n" * 3

# Token counts measured once (development time, not at run time) with the real cl100k_base,
# o200k_base, Qwen3, Qwen3.6 and DeepSeek-V4 vocabularies; each value is the LARGEST of the five.
MEASURED_MAX_TOKENS = [  # (name, text, measured, how far above it the estimate may go)
    ("python code", PYTHON_CODE, 181, 1.6),  # qwen3.6
    ("english prose", ENGLISH_PROSE, 68, 1.6),  # cl100k
    ("diff with whitespace runs and tabs", WHITESPACE_DIFF, 120, 1.6),  # qwen3.6
    ("chinese prose", CHINESE_PROSE, 127, 1.6),  # cl100k (Qwen3.6: 63)
    ("chinese commit message with identifiers", CHINESE_COMMIT, 88, 1.6),  # cl100k
    ("json config", JSON_CONFIG, 97, 1.6),  # qwen3.6
    ("numbers (qwen: one token per digit)", NUMBERS, 366, 1.6),  # qwen3
    ("base64 blob", BASE64_BLOB, 768, 1.6),  # qwen3
    ("hex hashes", HEX_HASHES, 429, 1.6),  # qwen3
    ("emoji", EMOJI_LINE, 87, 1.6),  # cl100k
    ("CRLF lines", "x = 1\r\n\r\n  y = 2\r\n" * 20, 300, 1.6),  # deepseek tokenizes \r\n poorly
    # Pure whitespace: counted at half the longest runs the vocabularies hold, on purpose.
    ("5000 spaces", " " * 5000, 40, 2.0),  # every vocabulary: 128 spaces per token
    ("3000 tabs", "\t" * 3000, 375, 2.0),  # deepseek: 8 tabs per token
    ("2000 newlines", "\n" * 2000, 125, 2.0),  # o200k/deepseek: 16 per token
]


@pytest.mark.parametrize("name,text,measured,slack", MEASURED_MAX_TOKENS, ids=[m[0] for m in MEASURED_MAX_TOKENS])
def test_estimate_never_under_counts_and_stays_close(name, text, measured, slack):
    estimate = estimate_tokens(text)
    assert estimate >= measured, f"{name}: estimated {estimate}, a real tokenizer needs {measured}"
    assert estimate <= slack * measured, f"{name}: estimated {estimate}, far above {measured}"


def test_estimate_gives_cjk_at_least_one_token_per_character():
    for text in ("中" * 100, "变更摘要：修复时区错误", "スケジュール", "커밋 요약"):
        assert estimate_tokens(text) >= len(text.replace(" ", ""))


@pytest.mark.parametrize(
    "char,cost",
    [
        ("ж", 0.6),
        ("é", 0.6),
        ("λ", 0.6),  # 2-byte UTF-8: Cyrillic, accents, Greek
        ("→", 1.5),
        ("═", 1.5),  # 3-byte symbols and box drawing
        ("😀", 3.0),  # astral: emoji
        ("中", 1.25),
        ("カ", 1.25),  # CJK
    ],
)
def test_estimate_charges_each_kind_of_non_ascii_character_its_documented_rate(char, cost):
    """The rates of the comment above estimate_tokens, on a hundred characters of one kind, and
    beside ASCII text (the two costs add up)."""
    assert 100 * cost <= estimate_tokens(char * 100) <= 100 * cost + 1
    assert 1 + 100 * cost <= estimate_tokens("word" + char * 100) <= 1 + 100 * cost + 1


@pytest.mark.parametrize("edge,inner", [("Z", "Y"), ("A", "B")])
def test_a_random_looking_key_costs_the_same_whichever_capitals_it_has(edge, inner):
    """Capitals at the ends of the alphabet make a key no less random (a base64 blob's only
    capital may well be a Z)."""
    key = "q7{c}x2m{c}9k4p{c}1w8z{c}3v5n"
    assert estimate_tokens(key.format(c=edge)) == estimate_tokens(key.format(c=inner))


def test_estimate_of_nothing_is_zero_and_of_anything_is_positive():
    assert estimate_tokens("") == 0
    for text in ("a", " ", "\n", "1", "。", "🔴", "\x00"):
        assert estimate_tokens(text) >= 1, repr(text)


def test_estimate_grows_with_repetition():
    one = estimate_tokens(PYTHON_CODE)
    assert estimate_tokens(PYTHON_CODE * 10) >= 9 * one


# =============================================================================================
# redact_secrets
# =============================================================================================
# Fake secrets are assembled at run time so the test source holds no string a secret scanner
# (or a push protection rule) would flag.

_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def fake(n: int, offset: int = 0) -> str:
    return "".join(_ALNUM[(i * 7 + offset) % len(_ALNUM)] for i in range(n))


def _pem(kind: str = "RSA ") -> str:
    body = "\n".join("+" + fake(64, i) for i in range(6))
    return f"+-----BEGIN {kind}PRIV" + f"ATE KEY-----\n{body}\n+-----END {kind}PRIV" + "ATE KEY-----"


GH = "gh"
SECRETS = [  # (name, text, kind, the secret that must disappear)
    ("pem block in a diff", _pem() + "\n+x = 1", "private-key", fake(64, 3)),
    ("openssh key", _pem("OPENSSH "), "private-key", fake(64, 0)),
    (
        "aws access key id",
        "aws_access_key_id = " + "AK" + "IA" + "Q3EGRIUMSNO5TX2B",
        "aws-access-key-id",
        "Q3EGRIUMSNO5TX2B",
    ),
    ("aws session key id", "id: AS" + "IA" + "Y34FZKBOKMUTVV7A", "aws-access-key-id", "Y34FZKBOKMUTVV7A"),
    ("aws secret in assignment", "aws_secret_access_key = " + fake(40), "aws-secret-key", fake(40)),
    ("aws secret in yaml", "AWS_SECRET_ACCESS_KEY: '" + fake(40, 5) + "'", "aws-secret-key", fake(40, 5)),
    ("github classic token", "token = '" + GH + "p_" + fake(36) + "'", "github-token", fake(36)),
    (
        "github oauth token",
        "curl -H 'Authorization: token " + GH + "o_" + fake(36, 2) + "'",
        "github-token",
        fake(36, 2),
    ),
    ("github app tokens", "x = '" + GH + "s_" + fake(36, 4) + "'", "github-token", fake(36, 4)),
    ("github user-to-server", "x = " + GH + "u_" + fake(36, 6), "github-token", fake(36, 6)),
    ("github refresh", "x = " + GH + "r_" + fake(40, 8), "github-token", fake(40, 8)),
    (
        "github fine-grained pat",
        "GITHUB_TOKEN=" + "github" + "_pat_" + "11ABCDEFG0" + fake(60, 1),
        "github-token",
        fake(60, 1),
    ),
    (
        "slack bot token",
        "slack = '" + "xo" + "xb-" + "1234567890-1234567890123-" + fake(24) + "'",
        "slack-token",
        fake(24),
    ),
    ("slack user token", "SLACK=" + "xo" + "xp-" + "1234567890-" + fake(30, 3), "slack-token", fake(30, 3)),
    ("slack app token", "app_token: " + "xa" + "pp-1-A0" + fake(30), "slack-token", fake(30)),
    (
        "slack webhook",
        "url = 'https://hooks.slack.com/services/" + "T0000/B0000/" + fake(24) + "'",
        "slack-webhook",
        fake(24),
    ),
    ("openai key", "OPENAI_API_KEY=" + "s" + "k-" + fake(48), "openai-key", fake(48)),
    ("openai project key", 'client = OpenAI(api_key="' + "s" + "k-proj-" + fake(60) + '")', "openai-key", fake(60)),
    ("google api key", "maps_key = '" + "AI" + "za" + fake(35) + "'", "google-api-key", fake(35)),
    ("stripe secret key", "stripe.api_key = '" + "sk" + "_live_" + fake(24) + "'", "stripe-key", fake(24)),
    ("stripe restricted key", "k = " + "rk" + "_test_" + fake(24, 9), "stripe-key", fake(24, 9)),
    ("jwt", "jwt = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + fake(43), "jwt", fake(43)),
    (
        "password in a url",
        "DATABASE_URL=postgres://admin:s3cretPass@db.example.com:5432/app",
        "url-password",
        "s3cretPass",
    ),
    ("token in a git remote", "remote = 'https://user:ghpass123@github.com/org/repo.git'", "url-password", "ghpass123"),
    ("password assignment", 'password = "correct-horse-9"', "password", "correct-horse-9"),
    ("yaml password", "DB_PASSWORD: hunter22", "password", "hunter22"),
    ("yaml api key", "API_KEY: abcdef123456", "api-key", "abcdef123456"),
    ("json client secret", '"client_secret": "abc123def456ghi"', "secret", "abc123def456ghi"),
    ("django secret key", "SECRET_KEY = 'django-insecure-abc123'", "secret", "django-insecure-abc123"),
    ("dotenv token", "export API_TOKEN=abcdefghij", "token", "abcdefghij"),
    ("yaml plain word password", "password: supersecret", "password", "supersecret"),
    ("annotated assignment", "token: str = 'abc123xyz'", "token", "abc123xyz"),
    ("bearer header", "Authorization: Bearer abc123def456ghi789jkl", "auth-header", "abc123def456ghi789jkl"),
]


@pytest.mark.parametrize("name,text,kind,secret", SECRETS, ids=[s[0] for s in SECRETS])
def test_each_secret_kind_is_redacted(name, text, kind, secret):
    redacted, count = redact_secrets(text)
    assert f"[REDACTED:{kind}]" in redacted
    assert secret not in redacted
    assert count == 1


SURVIVORS = [
    "token = get_token()",
    "password_field = models.CharField(max_length=128)",
    "max_tokens = 4096",
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "if not password:",
    "def login(user: str, password: str) -> bool:",
    "token = request.headers.get('X-Token')",
    "password = form.cleaned_data['password']",
    "token: Optional[str] = None",
    "api_key = settings.openai_api_key",
    "secret = os.environ['APP_SECRET']",
    "password: ${DB_PASSWORD}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "TOKEN = os.getenv('TOKEN')",
    '"password": "Password"',
    '{"token": token, "user": user}',
    "const { token } = useAuth();",
    "auth_token_header = 'X-Auth-Token'",
    "class PasswordResetView(View):",
    "The token is passed to the server; the password is never stored.",
    "<div class='sk-spinner-fading-circle-wrapper'>",
    "key = cache_key(user_id)",
    "if password == 'admin':",
    "secret = None",
    "password = ''",
    "http://localhost:8080/path",
    "https://{user}:{password}@host",
    "sha = 'a3f2b9c1d4e5f60718293a4b5c6d7e8f90a1b2c3'",
    "call(token=token,",
    "self.token = token",
    "password = getpass.getpass()",
    "api_key: str",
    "token_url = 'https://oauth2.googleapis.com/token'",
    "pwd = os.getcwd()",
    "token = Token(value)",
    "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "-----BEGIN CERTIFICATE-----",
]


@pytest.mark.parametrize("text", SURVIVORS)
def test_ordinary_code_survives_redaction(text):
    assert redact_secrets(text) == (text, 0)


def test_pem_block_is_replaced_whole_and_the_diff_around_it_survives():
    text = "+def load():\n" + _pem() + "\n+    return key\n"
    redacted, count = redact_secrets(text)
    assert count == 1
    assert redacted == "+def load():\n+[REDACTED:private-key]\n+    return key\n"


def test_pem_block_without_end_line_still_loses_its_body():
    text = "-----BEGIN PRIV" + "ATE KEY-----\n" + fake(64) + "\n" + fake(64, 9) + "\nnext_call(1)"
    redacted, count = redact_secrets(text)
    assert (count, fake(64, 9) in redacted, redacted.endswith("\nnext_call(1)")) == (1, False, True)


def test_several_secrets_are_all_counted():
    text = "\n".join(s[1] for s in SECRETS[:8])
    redacted, count = redact_secrets(text)
    assert count == 8
    assert all(s[3] not in redacted for s in SECRETS[:8])


# =============================================================================================
# select_diff: what is never sent
# =============================================================================================


def _code(path: str, lines: int = 3, marker: str = "") -> FileChange:
    body = "\n".join(f"+value_{i} = compute({i})  {marker}" for i in range(lines))
    return FileChange(path, "modified", lines, 0, f"@@ -1,0 +1,{lines} @@\n{body}")


def _check_invariants(selection: DiffSelection, files, budget: int) -> None:
    assert selection.tokens == estimate_tokens(selection.text)
    assert selection.tokens <= budget
    cov = selection.coverage
    assert cov.files_total == len(files)
    assert cov.files_shown + len(cov.omitted) == cov.files_total
    omitted = {path for path, _ in cov.omitted}
    assert set(cov.partial) <= {f.path for f in files} - omitted
    assert all(
        reason in {"lockfile", "binary", "generated", "vendored", "no patch", "over budget"}
        for _, reason in cov.omitted
    )


NEVER_SENT = [
    (FileChange("poetry.lock", "modified", 9, 9, "@@ -1 +1 @@\n-SENTINEL_A\n+SENTINEL_B"), "lockfile"),
    (FileChange("web/package-lock.json", "modified", 1, 1, "@@ -1 +1 @@\n-SENTINEL\n+SENTINEL"), "lockfile"),
    (FileChange("go.sum", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL h1:abc="), "lockfile"),
    (FileChange("Cargo.lock", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "lockfile"),
    (FileChange("logo.png", "added", 0, 0, None), "binary"),
    (FileChange("model.bin", "modified", 0, 0, "SENTINEL", binary=True), "binary"),
    (FileChange("static/app.min.js", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "generated"),
    (FileChange("proto/api_pb2.py", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "generated"),
    (FileChange("api/service.pb.go", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "generated"),
    (FileChange("src/client.generated.ts", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "generated"),
    (FileChange("dist/bundle.js", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "generated"),
    (
        FileChange(
            "internal/models.go",
            "modified",
            2,
            0,
            "@@ -1,3 +1,5 @@\n // Code generated by sqlc. DO NOT EDIT.\n package db\n+SENTINEL\n",
        ),
        "generated",
    ),
    (
        FileChange(
            "src/schema.py",
            "added",
            3,
            0,
            "@@ -0,0 +1,3 @@\n+# This file was automatically generated by datamodel-codegen.\n+SENTINEL\n+x = 1",
        ),
        "generated",
    ),
    (FileChange("vendor/github.com/x/y.go", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "vendored"),
    (FileChange("third_party/zlib/inflate.c", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "vendored"),
    (FileChange("web/node_modules/left-pad/index.js", "added", 1, 0, "@@ -0,0 +1 @@\n+SENTINEL"), "vendored"),
    (FileChange("external/googletest/gtest.h", "modified", 1, 0, "@@ -1 +1,2 @@\n a\n+SENTINEL"), "vendored"),
    (FileChange("src/enormous.py", "modified", 90000, 0, None), "no patch"),
]


@pytest.mark.parametrize("skipped,reason", NEVER_SENT, ids=[f.path for f, _ in NEVER_SENT])
def test_never_sent_files_are_named_with_their_reason(skipped, reason):
    files = [_code("src/app.py"), skipped]
    selection = select_diff(files, 5000)
    assert "SENTINEL" not in selection.text
    assert selection.coverage.omitted == ((skipped.path, reason),)
    assert f"- {skipped.path} ({reason})" in selection.text
    assert "value_2 = compute(2)" in selection.text
    _check_invariants(selection, files, 5000)


def test_do_not_edit_in_the_middle_of_a_hand_written_file_is_still_shown():
    f = FileChange(
        "src/config.py",
        "modified",
        1,
        0,
        "@@ -200,3 +200,4 @@\n # DO NOT EDIT this list without telling ops\n x = 1\n+y = 2",
    )
    selection = select_diff([f], 5000)
    assert selection.coverage.omitted == ()
    assert "+y = 2" in selection.text


def test_deleted_file_is_named_only_and_counts_as_shown():
    gone = FileChange("src/legacy.py", "removed", 0, 57, "@@ -1,2 +0,0 @@\n-SENTINEL = 1\n-x = 2")
    selection = select_diff([_code("src/app.py"), gone], 5000)
    assert "deleted: src/legacy.py (−57 lines)" in selection.text
    assert "SENTINEL" not in selection.text
    assert (selection.coverage.files_shown, selection.coverage.omitted) == (2, ())


def test_bare_rename_is_named_and_shown():
    moved = FileChange("src/new_name.py", "renamed", 0, 0, None, previous_path="src/old_name.py")
    selection = select_diff([moved], 5000)
    assert "renamed: src/old_name.py → src/new_name.py" in selection.text
    assert selection.coverage.complete


def test_empty_commit():
    selection = select_diff([], 1000)
    assert (selection.text, selection.tokens, selection.coverage) == ("", 0, Coverage(0, 0))


def test_redactions_happen_before_anything_is_sent_and_are_counted():
    secret = GH + "p_" + fake(36)
    f = FileChange(
        "src/settings.py",
        "modified",
        2,
        0,
        f"@@ -1 +1,3 @@\n import os\n+GITHUB = '{secret}'\n+password = \"hunter2-x\"",
    )
    for budget in (5000, 60):
        selection = select_diff([f], budget)
        assert secret not in selection.text and "hunter2-x" not in selection.text
        # the secrets counted are those of what is shown (at 60 tokens the file is not)
        assert selection.redactions == (2 if selection.coverage.files_shown else 0)
    assert "[REDACTED:github-token]" in select_diff([f], 5000).text


def _secret_file(path: str, secret: str, filler: int) -> FileChange:
    body = "".join(f"+value_{i} = compute_{i}(alpha, beta)\n" for i in range(filler))
    return FileChange(
        path, "modified", filler + 1, 0, f"@@ -1 +1,{filler + 2} @@\n import os\n+TOKEN = '{secret}'\n{body}"
    )


def test_only_the_patches_shown_are_redacted_and_counted_and_nothing_shown_holds_a_secret():
    # Three files holding a secret each, of three sizes: a budget that shows the small ones
    # whole, clips or leaves out the large one. Whatever is shown is redacted (a clipped patch
    # too), and the count is of the files shown.
    secrets = [GH + "p_" + fake(36, i) for i in range(3)]
    files = [
        _secret_file("src/small.py", secrets[0], 3),
        _secret_file("src/medium.py", secrets[1], 40),
        _secret_file("src/large.py", secrets[2], 2000),
    ]
    for budget in (200, 600, 1500, 4000, 60_000):
        selection = select_diff(files, budget)
        assert not any(s in selection.text for s in secrets), budget
        shown = selection.coverage.files_shown
        assert selection.redactions == shown == selection.text.count("[REDACTED:github-token]"), budget
    assert select_diff(files, 60_000).redactions == 3  # everything shown: everything counted


def test_the_room_a_shown_files_redaction_frees_is_used():
    # A long random value costs about a token a character; redacted it costs a few. The file
    # holding it fits as written and is shown; once redacted it leaves room for the next file,
    # which the selection made again then shows (files are selected on the text they show).
    secret = GH + "p_" + fake(36)
    blob = "".join(fake(60, i) for i in range(40))  # a secret-looking 2,400-character value
    # (its counts put it first: larger changes go first)
    keys = FileChange(
        "src/keys.py", "modified", 900, 0, f"@@ -1 +1,3 @@\n import os\n+TOKEN = '{secret}'\n+KEY = '{blob}'"
    )
    other = _secret_file("src/other.py", fake(8), 40)
    redacted = redact_text(keys.patch)
    assert blob not in redacted
    budget = estimate_tokens(keys.patch) + 200
    assert estimate_tokens(redacted) + estimate_tokens(other.patch) + 200 < budget  # both fit, once redacted
    selection = select_diff([keys, other], budget)
    assert selection.coverage.files_shown == 2 and secret not in selection.text and blob not in selection.text


# =============================================================================================
# select_diff: order, deletion-only hunks, clipping, the closing list
# =============================================================================================


def _header_positions(text: str) -> list[str]:
    return re.findall(r"^### (\S+)", text, flags=re.M)


def test_order_is_code_then_config_then_tests_then_docs_larger_first():
    files = [
        _code("docs/guide.md", 2),
        _code("tests/test_app.py", 40),
        _code("pyproject.toml", 30),
        _code("src/small.py", 2),
        _code("README.md", 50),
        _code("src/big.py", 20),
        _code("Dockerfile", 1),
        _code("src/app.test.ts", 5),
    ]
    selection = select_diff(files, 100_000)
    assert _header_positions(selection.text) == [
        "src/big.py",
        "src/small.py",
        "pyproject.toml",
        "Dockerfile",
        "tests/test_app.py",
        "src/app.test.ts",
        "README.md",
        "docs/guide.md",
    ]


def test_order_follows_the_analysers_path_classifier():
    # One classifier (bot/analysis/offline/paths.py) sorts files for the prompt and for the offline
    # rules: a build script is build, scripts are tooling that does not ship, examples and notebooks
    # are docs — all after the shipped source, however large they are.
    files = [
        _code("examples/demo.py", 50),
        _code("notebooks/tour.ipynb", 60),
        _code("scripts/release.py", 40),
        _code("build.rs", 5),
        _code("src/lib.rs", 1),
        _code("tests/test_lib.py", 10),
        _code("crates/app/src/tests.rs", 30),
    ]
    assert _header_positions(select_diff(files, 100_000).text) == [
        "src/lib.rs",
        "build.rs",
        "scripts/release.py",
        "crates/app/src/tests.rs",
        "tests/test_lib.py",
        "notebooks/tour.ipynb",
        "examples/demo.py",
    ]


@pytest.mark.parametrize(
    "path,reason",
    [
        ("uv.lock", "lockfile"),
        ("go.work.sum", "lockfile"),
        ("frontend/yarn.lock", "lockfile"),
        ("vendor/github.com/x/y.go", "vendored"),
        ("mypy/typeshed/stdlib/os.pyi", "vendored"),
        ("web/bower_components/x.js", "vendored"),
        ("api/v1/service.pb.go", "generated"),
        ("dist/app.min.js", "generated"),
        ("lib/model.g.dart", "generated"),
        ("crates/app/tests/snapshots/x.snap", None),
        ("src/app.py", None),
        ("docs/guide.md", None),
    ],
)
def test_skipped_files_by_path(path, reason):
    f = FileChange(path, "modified", 1, 0, "@@ -1,0 +1 @@\n+unique_marker = 1")
    assert skip_reason(f) == reason
    selection = select_diff([f, _code("src/other.py")], 100_000)
    assert ((path, reason) in selection.coverage.omitted) is (reason is not None)
    assert ("unique_marker" in selection.text) is (reason is None)


def test_everything_fits_so_everything_is_sent_including_deletions():
    files = make_commit_files(6, seed=3, special=False, deletion_only_share=1.0)
    selection = select_diff(files, 100_000)
    assert selection.coverage.complete
    assert "deletion-only hunk" not in selection.text
    for f in files:
        assert f.patch.split("\n")[-1] in selection.text  # each patch's last line: a deletion


def test_deletion_only_hunks_are_dropped_first_with_a_marker():
    added = "\n".join(f"+new_{i} = build({i})" for i in range(10))
    removed = "\n".join(f"-legacy_{i} = old_call({i}, {i + 1}, {i + 2})" for i in range(60))
    f = FileChange("src/app.py", "modified", 10, 60, f"@@ -1,0 +1,10 @@\n{added}\n@@ -100,60 +110,0 @@\n{removed}")
    full = estimate_tokens(f.patch)
    selection = select_diff([f], full // 2)
    assert "new_9 = build(9)" in selection.text
    assert "legacy_" not in selection.text
    assert "[… 1 deletion-only hunk omitted (−60 lines)]" in selection.text
    assert selection.coverage.complete
    _check_invariants(selection, [f], full // 2)


def test_an_oversized_patch_is_clipped_at_a_line_boundary():
    big, notes = _code("src/big.py", 2000), _code("docs/notes.md", 400)
    selection = select_diff([big, notes], 1500)
    assert "### src/big.py (modified, +2000 −0) [clipped]" in selection.text
    assert re.search(r"\[… clipped: \d+ more lines not shown\]", selection.text)
    original_lines = set(big.patch.split("\n"))
    shown = selection.text.split("[clipped]\n", 1)[1].split("\n[… clipped")[0].split("\n")
    assert len(shown) > 20 and all(line in original_lines for line in shown)
    assert selection.coverage.partial == ("src/big.py",)
    assert selection.coverage.omitted == (("docs/notes.md", "over budget"),)
    _check_invariants(selection, [big, notes], 1500)


def test_one_huge_file_does_not_crowd_out_the_small_ones_of_its_kind():
    files = [_code("src/big.py", 3000), _code("src/small.py", 3, marker="SMALL")]
    selection = select_diff(files, 2000)
    assert "value_2 = compute(2)  SMALL" in selection.text
    assert selection.coverage.partial == ("src/big.py",)
    assert selection.coverage.files_shown == 2


def test_a_patch_too_big_to_clip_usefully_is_left_out_but_smaller_later_files_still_go_in():
    files = [_code("src/big.py", 3000), _code("tests/test_a.py", 60), _code("docs/tiny.md", 1, "TINY")]
    tiny_cost = estimate_tokens(select_diff([files[2]], 1000).text)
    selection = select_diff(files, tiny_cost + CLIP_MIN_TOKENS)
    assert "TINY" in selection.text
    assert ("src/big.py", "over budget") in selection.coverage.omitted
    assert "- src/big.py (over budget)" in selection.text


def test_the_closing_list_of_a_500_file_commit_stays_within_budget():
    files = make_commit_files(500, seed=11)
    selection = select_diff(files, 3000)
    _check_invariants(selection, files, 3000)
    omitted = len(selection.coverage.omitted)
    assert omitted > 400
    listed = len(
        re.findall(
            r"^- .+ \((?:lockfile|binary|generated|vendored|no patch|over budget)\)$", selection.text, flags=re.M
        )
    )
    assert 1 <= listed < omitted
    assert selection.text.endswith(f"… and {omitted - listed} more files")
    assert f"Not shown ({omitted} files):" in selection.text


def test_a_2mb_patch_is_clipped_within_budget():
    files = make_commit_files(3, seed=5, big_patch_bytes=2_000_000)
    selection = select_diff(files, 12_000)
    _check_invariants(selection, files, 12_000)
    assert "src/huge_module.py" in selection.coverage.partial
    assert selection.tokens > 11_000  # the budget is used, not wasted


SHAPES = {
    "empty commit": lambda: [],
    "one small file": lambda: make_commit_files(1, special=False),
    "only never-sent files": lambda: [f._replace_path(i) for i, f in enumerate(_special_files() * 3)],
    "no patches at all": lambda: [FileChange(f"src/f{i}.py", "modified", 5, 5, None) for i in range(50)],
    "500 files": lambda: make_commit_files(500, seed=1),
    "10,000 tiny files": lambda: [
        FileChange(f"src/m{i}.py", "modified", 1, 1, f"@@ -1 +1 @@\n-a={i}\n+a={i + 1}") for i in range(10_000)
    ],
    "2 MB patch": lambda: make_commit_files(2, seed=2, big_patch_bytes=2_000_000),
    "single enormous line": lambda: [
        FileChange("data/blob.json", "modified", 1, 0, "@@ -1 +1 @@\n+" + '{"k": "' + "v" * 300_000 + '"}')
    ],
    "deletion heavy": lambda: make_commit_files(40, seed=4, deletion_only_share=1.0),
    "chinese and emoji": lambda: [
        FileChange(
            "docs/说明.md",
            "modified",
            200,
            0,
            "@@ -0,0 +1,200 @@\n" + "\n".join(f"+第{i}行：修复时区错误 🔴" for i in range(200)),
        )
    ],
}
BUDGETS = [0, 1, 7, 40, 150, 1500, 12_000]
FEWER_BUDGETS = {"10,000 tiny files": [0, 40, 1500, 12_000], "2 MB patch": [0, 150, 12_000]}  # slow shapes


@pytest.mark.parametrize("shape", list(SHAPES))
def test_budget_invariant_holds_for_every_shape_and_budget(shape):
    files = SHAPES[shape]()
    for budget in FEWER_BUDGETS.get(shape, BUDGETS):
        selection = select_diff(files, budget)
        _check_invariants(selection, files, budget)
        relevant = relevant_hunks(files, "why did compute_user change?", budget)
        _check_invariants(relevant, files, budget)


@pytest.mark.parametrize("seed", range(12))
def test_budget_invariant_over_random_commits(seed):
    rng = random.Random(seed)
    files = make_commit_files(
        rng.randint(0, 120), seed=seed, max_lines=rng.choice([5, 40, 300]), deletion_only_share=rng.random()
    )
    for budget in (rng.randint(0, 60), rng.randint(60, 800), rng.randint(800, 20_000)):
        selection = select_diff(files, budget)
        _check_invariants(selection, files, budget)
        for path in selection.coverage.partial:
            assert f"### {path} (" in selection.text


def test_negative_budget_is_treated_as_zero():
    selection = select_diff(make_commit_files(3), -5)
    assert (selection.text, selection.tokens) == ("", 0)


# =============================================================================================
# coverage_line
# =============================================================================================

EXAMPLE = Coverage(
    files_total=17,
    files_shown=14,
    omitted=(("poetry.lock", "lockfile"), ("logo.png", "binary"), ("big.py", "over budget")),
)


def test_coverage_line_en_example():
    assert coverage_line(EXAMPLE, "en") == (
        "14/17 files analysed; not shown: poetry.lock (lockfile), logo.png (binary), big.py (over budget)"
    )


def test_coverage_line_zh_example():
    assert coverage_line(EXAMPLE, "zh") == (
        "已分析 14/17 个文件；未展示：poetry.lock（锁文件）、logo.png（二进制文件）、big.py（超出长度限制）"
    )


def test_coverage_line_names_clipped_files():
    cov = Coverage(files_total=3, files_shown=3, partial=("src/huge.py",))
    assert coverage_line(cov, "en") == "3/3 files analysed; clipped: src/huge.py"
    assert coverage_line(cov, "zh") == "已分析 3/3 个文件；已截断：src/huge.py"


def test_coverage_line_complete():
    assert coverage_line(Coverage(5, 5), "en") == "All 5 files analysed"
    assert coverage_line(Coverage(5, 5), "zh") == "已分析全部 5 个文件"
    assert coverage_line(Coverage(1, 1), "en") == "The changed file was analysed"
    assert coverage_line(Coverage(0, 0), "en") == "No files changed"
    assert coverage_line(Coverage(0, 0), "zh") == "此提交没有文件改动"


def test_coverage_line_truncates_a_long_list():
    omitted = tuple((f"src/f{i}.py", "over budget") for i in range(12))
    cov = Coverage(files_total=20, files_shown=8, omitted=omitted)
    en = coverage_line(cov, "en")
    zh = coverage_line(cov, "zh")
    assert en.endswith("src/f4.py (over budget) +7 more")
    assert "src/f5.py" not in en
    assert zh.endswith("src/f4.py（超出长度限制）等 12 个")  # zh names the total: "…等 12 个"


def test_coverage_line_shortens_very_long_paths():
    path = "services/payments/internal/adapters/providers/stripe/webhooks/handlers/refund_created.py"
    line = coverage_line(Coverage(2, 1, omitted=((path, "over budget"),)), "en")
    assert "…/handlers/refund_created.py (over budget)" in line
    assert len(line) < 100


def test_coverage_line_of_a_real_selection():
    files = [
        _code("src/app.py"),
        FileChange("poetry.lock", "modified", 1, 1, "@@ -1 +1 @@\n-a\n+b"),
        FileChange("logo.png", "added", 0, 0, None),
    ]
    assert coverage_line(select_diff(files, 5000).coverage, "en") == (
        "1/3 files analysed; not shown: poetry.lock (lockfile), logo.png (binary)"
    )


# =============================================================================================
# relevant_hunks
# =============================================================================================


def _hunks(*bodies: str) -> str:
    return "\n".join(f"@@ -{10 * i + 1},3 +{10 * i + 1},4 @@ def block_{i}():\n{body}" for i, body in enumerate(bodies))


QA_FILES = [
    FileChange(
        "src/window.py",
        "modified",
        6,
        3,
        _hunks(
            " import datetime\n-import time\n+import zoneinfo",
            " def parse_date(text):\n-    return datetime.date.fromisoformat(text)\n"
            "+    day = datetime.date.fromisoformat(text.strip())\n+    return day",
            " def render_header(title):\n-    return title.upper()\n+    return f'*{title}*'\n+    # bold in Slack",
        ),
    ),
    FileChange(
        "src/store.py",
        "modified",
        3,
        0,
        _hunks(
            " class Store:\n+    def cache_digest(self, key, value):\n+        self.redis.set(key, value)\n"
            "+        return True",
        ),
    ),
    FileChange("docs/usage.md", "modified", 2, 0, _hunks(" # Usage\n+Run the bot daily.\n+It posts digests.")),
    FileChange("poetry.lock", "modified", 1, 1, "@@ -1 +1 @@\n-a\n+parse_date"),
]


def test_relevant_hunks_puts_the_hunk_with_the_asked_identifier_first():
    selection = relevant_hunks(QA_FILES, "Why did parse_date change?", 10_000)
    first = selection.text.split("### ")[1]
    assert first.startswith("src/window.py\n@@ -11,3 +11,4 @@ def block_1():")
    assert "fromisoformat(text.strip())" in first
    _check_invariants(selection, QA_FILES, 10_000)


def test_relevant_hunks_within_a_small_budget_keeps_only_the_best():
    question = "what does cache_digest do?"
    cost_of_best = estimate_tokens("### src/store.py\n" + QA_FILES[1].patch)
    selection = relevant_hunks(QA_FILES, question, cost_of_best + 45)
    assert "def cache_digest(self, key, value):" in selection.text
    assert "parse_date" not in selection.text and "render_header" not in selection.text
    assert ("src/window.py", "over budget") in selection.coverage.omitted
    _check_invariants(selection, QA_FILES, cost_of_best + 45)


def test_relevant_hunks_understands_a_chinese_question_and_file_names():
    selection = relevant_hunks(QA_FILES, "为什么修改了 render_header？", 10_000)
    assert selection.text.split("### ")[1].startswith("src/window.py\n@@ -21,3 +21,4 @@ def block_2():")
    by_name = relevant_hunks(QA_FILES, "what changed in usage.md?", 10_000)
    assert by_name.text.split("### ")[1].startswith("docs/usage.md\n")


def test_relevant_hunks_prefixes_every_hunk_with_its_path_and_header():
    selection = relevant_hunks(QA_FILES, "anything", 10_000)
    blocks = selection.text.split("Not shown")[0].strip().split("### ")[1:]
    assert len(blocks) == 5
    for block in blocks:
        path, header = block.split("\n")[:2]
        assert path in {"src/window.py", "src/store.py", "docs/usage.md"}
        assert header.startswith("@@ -")
    assert selection.coverage.omitted == (("poetry.lock", "lockfile"),)
    assert selection.coverage.partial == ()


def test_relevant_hunks_marks_files_with_hunks_left_out_as_partial():
    selection = relevant_hunks(QA_FILES, "parse_date", estimate_tokens(QA_FILES[0].patch) // 2 + 40)
    assert selection.coverage.partial == ("src/window.py",)
    assert "parse_date" in selection.text


def test_relevant_hunks_redacts():
    secret = "s" + "k-" + fake(48)
    files = [FileChange("src/llm.py", "modified", 1, 0, f"@@ -1 +1,2 @@\n import openai\n+KEY = '{secret}'")]
    selection = relevant_hunks(files, "which key does llm.py use?", 1000)
    assert secret not in selection.text and "[REDACTED:openai-key]" in selection.text
    assert selection.redactions == 1


# --- what the mutation run found untested ----------------------------------------------------


@pytest.mark.parametrize(
    "identifier,tokens",
    [
        ("getUserNameFromDatabase", 6),  # get|User|Name|From|Datab|ase
        ("parseHttpRequestHeaderV2", 7),  # parse|Http|Reque|st|Heade|r|V… : a word piece per class run
        ("toJSONString_forHTTP2", 7),
        ("v1a2b3c4d5e6f7g8x9", 18),  # one case only: no key, however often letters and digits alternate
    ],
)
def test_long_identifiers_are_costed_as_words_not_as_random_keys(identifier, tokens):
    assert estimate_tokens(identifier) == tokens


def test_a_file_with_an_empty_patch_is_named_as_changed_without_content():
    mode_change = FileChange("bin/run.sh", "modified", 0, 0, "")  # e.g. chmod +x: no hunk
    selection = select_diff([_code("src/app.py"), mode_change], 5000)
    assert "modified: bin/run.sh (no content changes)" in selection.text
    assert selection.coverage.complete


def test_a_deleted_file_without_a_deletion_count_counts_its_patch_lines():
    gone = FileChange("src/old.py", "removed", 0, 0, "@@ -1,3 +0,0 @@\n-a = 1\n-b = 2\n-c = 3")
    assert "deleted: src/old.py (−3 lines)" in select_diff([gone], 5000).text


def test_an_enormous_line_is_cut_to_the_room_left_not_dropped():
    line = '+{"k": "' + "v" * 300_000 + '"}'
    blob = FileChange("data/blob.json", "modified", 1, 0, "@@ -1 +1 @@\n" + line)
    selection = select_diff([blob], 1500)
    _check_invariants(selection, [blob], 1500)
    cut = re.search(r'^\+\{"k": "(v+) …$', selection.text, flags=re.M)
    assert cut and selection.coverage.partial == ("data/blob.json",)
    assert selection.tokens > 1000  # most of the budget carries the line's start


def test_an_enormous_chinese_line_is_cut_within_the_budget_and_uses_it():
    line = "+" + "修复时区错误" * 20_000  # each character costs more than the 4-per-token first guess
    notes = FileChange("docs/说明.md", "modified", 1, 0, "@@ -0,0 +1 @@\n" + line)
    selection = select_diff([notes], 1500)
    _check_invariants(selection, [notes], 1500)
    shown = re.search(r"^\+([修复时区错误]+) …$", selection.text, flags=re.M)
    assert shown and 1.25 * len(shown.group(1)) > 1000  # the cut is shrunk to fit, not to nothing


def test_as_the_budget_grows_the_closing_list_goes_from_a_count_to_one_name_to_several():
    files = [_code("src/app.py")] + [
        FileChange(f"pkg{i}/package-lock.json", "modified", 3, 1, "@@ x") for i in range(30)
    ]
    listed = set()
    for budget in range(1, 400):
        selection = select_diff(files, budget)
        names = len(re.findall(r"^- \S+ \((?:lockfile|over budget)\)$", selection.text, flags=re.M))
        if names:
            assert selection.text.endswith(f"… and {len(selection.coverage.omitted) - names} more files")
        listed.add(names)
    assert {0, 1, 2} <= listed  # one name and the count of the rest, before two names


def test_the_closing_count_of_a_single_file_is_singular():
    lock = "/".join(["deeply_nested_directory_name"] * 8) + "/yarn.lock"  # its name costs more than a count
    files = [_code("src/app.py", 40), FileChange(lock, "modified", 3, 1, "@@ x")]
    texts = [select_diff(files, budget).text for budget in range(1, 300)]
    assert any(t.endswith("[1 file not shown]") for t in texts)
    assert not any("1 files" in t for t in texts)


def test_a_file_with_one_of_its_two_hunks_shown_is_partial():
    f = FileChange("src/when.py", "modified", 2, 0, _hunks("+    parse_date(text)", "+    unrelated = 2"))
    one = [
        s
        for s in (relevant_hunks([f], "parse_date", b) for b in range(1, 200))
        if "parse_date" in s.text and "unrelated" not in s.text
    ]
    assert one and all(s.coverage.partial == ("src/when.py",) for s in one)


def _first_file(selection: DiffSelection) -> str:
    return re.search(r"^### (\S+)", selection.text, flags=re.M).group(1)


@pytest.mark.parametrize(
    "question",
    [
        "did utils.py change, or setup.cfg?",  # a base name (and another that is not in the commit)
        "what happened in src/utils.py?",  # the whole path
    ],
)
def test_offline_answers_start_with_the_file_the_question_names(question):
    files = [
        FileChange("lib/helpers.py", "modified", 1, 0, _hunks("+    setup()")),
        FileChange("src/utils.py", "modified", 1, 0, _hunks("+    x = 1")),
    ]
    first = _first_file(relevant_hunks(files, question, 2000))
    assert first == "src/utils.py"  # though the other hunk has a word of the question on a changed line


def test_offline_answers_weigh_a_three_letter_part_of_an_identifier():
    files = [
        FileChange("src/a.py", "modified", 1, 0, _hunks("+    total = 1")),
        FileChange("src/b.py", "modified", 1, 0, _hunks("+    base_url = 'https://example.com'")),
    ]
    assert _first_file(relevant_hunks(files, "why did fetchUrl break?", 2000)) == "src/b.py"  # "url"


def test_offline_answers_show_the_hunks_of_a_deleted_file():
    gone = FileChange("src/legacy.py", "removed", 0, 2, "@@ -1,2 +0,0 @@\n-def parse_legacy():\n-    pass")
    selection = relevant_hunks([gone], "what did parse_legacy do?", 2000)
    assert "-def parse_legacy():" in selection.text


def test_offline_answers_name_a_lockfile_as_not_shown():
    selection = relevant_hunks(QA_FILES, "parse_date", 5000)
    assert ("poetry.lock", "lockfile") in selection.coverage.omitted
    assert selection.coverage.files_shown == 3


def test_offline_answers_clip_a_hunk_too_big_for_the_room():
    body = "\n".join(f"+    parse_date_{i} = parse_date(rows[{i}])" for i in range(400))
    big = FileChange("src/rows.py", "modified", 400, 0, "@@ -1,0 +1,400 @@ def load():\n" + body)
    selection = relevant_hunks([big], "parse_date", 600)
    assert "+    parse_date_0 = parse_date(rows[0])" in selection.text
    assert re.search(r"\[… clipped: \d+ more lines not shown\]", selection.text)
    assert selection.coverage.partial == ("src/rows.py",)


@pytest.mark.parametrize(
    "path,shown",
    [
        ("a" * 45 + ".py", "a" * 45 + ".py"),  # 48 characters: shown whole
        ("b" * 46 + ".py", "…/" + "b" * 46 + ".py"),  # 49: shortened (its one component is the tail)
        ("root/" + "c" * 20 + "/" + "d" * 22 + ".py", "…/" + "c" * 20 + "/" + "d" * 22 + ".py"),  # tail of 46
        ("root/" + "c" * 21 + "/" + "d" * 22 + ".py", "…/" + "d" * 22 + ".py"),  # tail of 47: the base name
        ("root/" + "c" * 24 + "/" + "d" * 22 + ".py", "…/" + "d" * 22 + ".py"),  # tail of 50
    ],
)
def test_coverage_line_path_length_edges(path, shown):
    line = coverage_line(Coverage(2, 1, omitted=((path, "over budget"),)), "en")
    assert line == f"1/2 files analysed; not shown: {shown} (over budget)"


def test_offline_answers_do_not_call_a_file_named_only_partial():
    gone = FileChange("src/old.py", "removed", 0, 10, None)  # deleted, no patch: its name is all there is
    selection = relevant_hunks([*QA_FILES[:3], gone], "parse_date", 5000)
    assert "deleted: src/old.py (−10 lines)" in selection.text
    assert selection.coverage.partial == ()


def test_offline_answers_rank_the_hunk_that_changes_the_asked_name_most_first():
    once = FileChange("src/a.py", "modified", 1, 0, _hunks("+    retry_budget = 1"))
    thrice = FileChange(
        "src/b.py", "modified", 3, 0, _hunks("+    retry_budget = 2\n+    retry_budget += 1\n+    log(retry_budget)")
    )
    assert _first_file(relevant_hunks([once, thrice], "what is retry_budget for?", 2000)) == "src/b.py"


def test_offline_answers_weigh_a_three_letter_name_as_a_whole_identifier():
    writer = FileChange("src/a.py", "modified", 1, 0, _hunks("+    writer = None"))  # the other name, once
    csv = FileChange("src/b.py", "modified", 2, 0, _hunks("+    rows = csv.reader(f)\n+    csv.dump(rows)"))
    assert _first_file(relevant_hunks([writer, csv], "what does the csv writer do?", 2000)) == "src/b.py"


def test_offline_answers_weigh_a_rare_word_above_many_hits_of_a_common_one():
    """A word of the question found in one hunk beats nine hits of one found in every hunk: rarity
    is log(1 + hunks / (1 + hunks holding the word)), hits add 1 + log(hits)."""
    rare = FileChange("src/p.py", "modified", 1, 0, _hunks(" # quokka\n+    zebra = 1"))
    common = FileChange(
        "src/q.py",
        "modified",
        4,
        0,
        _hunks(" # quokka\n+    quokka = 1\n+    quokka += 1\n+    quokka += 2\n+    quokka += 3"),
    )
    assert _first_file(relevant_hunks([common, rare], "zebra quokka?", 2000)) == "src/p.py"


def test_estimate_within_is_the_estimate_up_to_its_limit():
    from bot.diffs.tokens import estimate_within

    texts = ["", " ", "\n\n\n", "a\n\n\nb", PYTHON_CODE, PYTHON_CODE * 3 + "\n" + fake(200), "中文 text\n" * 30]
    for text in texts:
        whole = estimate_tokens(text)
        for limit in {0, 1, whole - 1, whole, whole + 1, 2 * whole}:
            if limit >= 0:
                assert estimate_within(text, limit) == (whole if whole <= limit else None), (text[:20], limit)
