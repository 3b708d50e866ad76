"""Security: claimed fixes, mentions, trust boundaries, refused input, sensitive paths."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import ENTRY_POINTS_V1, HASHES_V1, HIGH, LOW, MEDIUM, WHEN, T, analyse_last, commit, mod


def test_security_fix_is_high_and_security_paths_are_noticed():
    a = analyse_offline(commit("Fix CVE-2025-12345: reject unsigned tokens"), [mod("src/app/auth/jwt.py", 8, 2)], "en")
    assert a.importance is HIGH
    assert "CVE-2025-12345" in a.importance_reason
    assert "CVE-2025-12345" in a.insights.security and "src/app/auth/jwt.py" in a.insights.security
    touched = analyse_offline(commit("Fix session expiry"), [mod("src/app/auth/session.py", 8, 2)], "en")
    assert touched.importance is MEDIUM
    assert "security-sensitive" in touched.importance_reason
    # Restructuring code under auth/ (avoiding clones, renaming) is not a security change.
    tidy = analyse_offline(commit("Tidy session handling"), [mod("src/app/auth/session.py", 8, 2)], "en")
    assert tidy.importance is LOW and "security" not in tidy.importance_reason
    # 'tokenizer' is not a security path
    assert analyse_offline(commit("Tidy tokenizer"), [mod("src/app/tokenizer.py", 8, 2)], "en").importance is LOW


def test_security_claims_versus_mentions():
    # "security" alone is noted (medium), not a claimed fix; a docs-only security page stays docs.
    mention = analyse_offline(commit("[Frontend] Add security headers option"), [mod("src/app/server.py", 20, 2)], "en")
    assert (mention.change_type, mention.importance) == (T.FEATURE, MEDIUM)
    assert "mentions security" in mention.importance_reason
    policy = analyse_offline(commit("Fix security advisory link"), [mod("SECURITY.md", 1, 1)], "en")
    assert (policy.change_type, policy.importance) == (T.DOCS, LOW)
    xss = analyse_offline(commit("[Bugfix] Fix XSS in the HTML report"), [mod("src/app/report.py", 3, 1)], "zh")
    assert (xss.change_type, xss.importance) == (T.SECURITY, HIGH)
    assert xss.importance_reason == "安全修复，受影响版本应尽快升级"


def test_revert_of_a_security_fix_is_high_and_not_called_a_fix():
    a = analyse_offline(commit('Revert "Fix path traversal in static files"'), [mod("src/app/static.py", 2, 9)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, HIGH)
    assert a.importance_reason.startswith("Reverts a security-related change")
    assert not any(r.startswith("The fixed security issue") for r in a.risks)


def test_one_line_reserved_entry_point_fix_is_high(repo):
    repo.commit(
        "Reject case-variant reserved entry points (#2001)",
        {"src/app/entry_points.py": ENTRY_POINTS_V1.replace("if name in RESERVED", "if name.lower() in RESERVED")},
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is HIGH, a.importance_reason
    assert "reserved" in a.importance_reason
    assert any("refused" in r for r in a.risks)


def test_md5_only_hashes_rejected_under_require_hashes_is_high(repo):
    repo.commit(
        "Reject MD5-only hashes under --require-hashes",
        {
            "src/app/hashes.py": HASHES_V1.replace(
                "    return True\n",
                "    if require_hashes and set(hashes) == {'md5'}:\n        return False\n    return True\n",
            )
        },
        when=WHEN,
    )
    a = analyse_last(repo, "zh")
    assert a.importance is HIGH, a.importance_reason
    assert "md5" in a.importance_reason.lower()


def test_hardening_the_release_pipeline_is_a_floor_not_a_ceiling():
    hardening = analyse_offline(
        commit("Harden the release workflow permissions"), [mod(".github/workflows/release.yml", 6, 3)], "en"
    )
    assert hardening.importance is MEDIUM
    assert hardening.importance_reason.startswith("Hardens the release pipeline")
    other_ci = analyse_offline(
        commit("Harden the lint workflow permissions"), [mod(".github/workflows/lint.yml", 6, 3)], "en"
    )
    assert other_ci.importance is LOW


BUDGET_V1 = """\
def fit(prompt_tokens: int, window: int, max_output: int) -> int:
    return window - max_output
"""
BUDGET_CHECKED = BUDGET_V1.replace(
    "    return",
    "    if prompt_tokens + max_output > window:\n"
    '        raise ValueError("the prompt leaves no room for the output")\n    return',
)
REFUSES = (
    "Newly refuses input that was accepted before (“reject”); callers relying on the old leniency fail",
    "开始拒绝以前接受的输入（reject），依赖旧行为的调用会失败",
)


@pytest.mark.parametrize(
    "message",
    [
        "Reject prompts that leave no room for the output reserved per request",
        "Reject prompts longer than the window\n\nThe output reserved per request is subtracted from the window first.",
    ],
)
def test_output_reserved_per_request_is_not_a_trust_boundary(repo, message):
    """Issue 24: "output reserved per request" became "refuses input in a security check". The
    check is real (a raise under a new condition), so the input refused is news; "reserved" here
    is tokens set aside, not a reserved name, so it is no trust boundary."""
    repo.commit("Add the prompt budget", {"src/app/budget.py": BUDGET_V1}, when=WHEN)
    repo.commit(message, {"src/app/budget.py": BUDGET_CHECKED}, when=WHEN)
    for lang, reason, boundary in zip(("en", "zh"), REFUSES, ("trust boundary", "信任边界")):
        a = analyse_last(repo, lang)
        assert (a.importance, a.importance_reason) == (MEDIUM, reason)
        assert not any(boundary in r for r in a.risks)


def test_a_trust_boundary_refusal_is_high_only_when_the_diff_adds_the_check(repo):
    """The message says where the check is (MD5, --require-hashes); only the code says input is now
    refused. A comment and an error message that say "reject" add no check: the title's words are
    hints, and with the patch at hand nothing bears them out, so it is a small change like any."""
    reworded = HASHES_V1.replace(
        "    if require_hashes", "    # MD5-only hashes are rejected under --require-hashes\n    if require_hashes"
    ).replace("    return True", "    return True  # reject md5")
    repo.commit("Reject MD5-only hashes under --require-hashes", {"src/app/hashes.py": reworded}, when=WHEN)
    en, zh = analyse_last(repo, "en"), analyse_last(repo, "zh")
    assert (en.importance, en.importance_reason) == (LOW, "Change with a small source change (1 file, +2/−1)")
    assert (zh.importance, zh.importance_reason) == (LOW, "其他改动，源码改动小（1 个文件，+2/−1）")
    assert en.risks == ()


def test_words_of_a_title_without_a_check_in_the_diff_are_not_evidence(repo):
    """Issue 33: "…ephemeral refusals per chat (globally only on permission errors)…" was rated high
    ("refuses input on a trust boundary (permission)"). "refusals" names earlier refusals, not input
    this change starts refusing, and "permission" is a hint that no new check in the diff bears out
    (a check about something else is no check on permissions)."""
    repo.commit(
        "Ephemeral refusals per chat (globally only on permission errors)",
        {"src/app/budget.py": BUDGET_CHECKED},
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is not HIGH
    assert "trust boundary" not in a.importance_reason and "refuses" not in a.importance_reason
    assert not any("trust boundary" in r for r in a.risks)
    # "a refused edit" is the bug fixed, not input refused from now on
    fixed = analyse_offline(
        commit("Fix: a refused edit of a streamed answer showed its text twice"),
        [mod("src/app/budget.py", 9, 3, "@@ -1,2 +1,3 @@\n def fit(n):\n+    if n < 0:\n+        raise ValueError\n")],
        "en",
    )
    assert "refuses" not in fixed.importance_reason


def test_entry_points_escaping_their_directory_are_a_trust_boundary(repo):
    checked = ENTRY_POINTS_V1 + (
        "\n\ndef check_script_name(name: str) -> None:\n"
        '    if "/" in name or ".." in name:\n        raise ValueError(f"script name escapes the directory: {name}")\n'
    )
    repo.commit(
        "Reject entry point names that escape scripts dir (#14000)", {"src/app/entry_points.py": checked}, when=WHEN
    )
    en, zh = analyse_last(repo, "en"), analyse_last(repo, "zh")
    assert (en.importance, en.importance_reason) == (
        HIGH,
        "Newly refuses input on a trust boundary (escape scripts dir); small as the diff is, input that used "
        "to pass now fails",
    )
    assert (zh.importance, zh.importance_reason) == (
        HIGH,
        "在安全相关的检查上（escape scripts dir）拒绝以前接受的输入，即使改动很小也会影响用户",
    )


def test_escaping_quotes_is_not_a_trust_boundary():
    files = [mod("src/black/strings.py", 2, 2)]
    title = "don't escape nested quotes inside t-string replacement fields (#5265)"
    en, zh = analyse_offline(commit(title), files, "en"), analyse_offline(commit(title), files, "zh")
    assert (en.importance, en.importance_reason) == (LOW, "Change with a small source change (1 file, +2/−2)")
    assert (zh.importance, zh.importance_reason) == (LOW, "其他改动，源码改动小（1 个文件，+2/−2）")


def test_an_issue_template_is_not_a_workflow_a_security_fix_could_change():
    """Rewording how to report vulnerabilities (docs and an issue template under .github/) keeps the
    docs ceiling; a security fix to a workflow does not."""
    files = [
        mod(".github/ISSUE_TEMPLATE/3_security_vulnerability.md", 8, 0),
        mod("README.rst", 1, 3),
        mod("SECURITY.md", 3, 0),
        mod("doc/en/index.rst", 1, 3),
    ]
    title = "Report security vulnerabilities using GitHub (#14549)"
    en, zh = analyse_offline(commit(title), files, "en"), analyse_offline(commit(title), files, "zh")
    assert (en.importance, en.importance_reason) == (
        LOW,
        "Only docs and CI files change (4 files); no runtime code touched",
    )
    assert (zh.importance, zh.importance_reason) == (LOW, "仅改动文档、CI 配置（4 个文件），不影响运行时代码")
    workflow = analyse_offline(
        commit("Fix command injection in the release workflow"), [mod(".github/workflows/release.yml", 3, 3)], "en"
    )
    assert (workflow.importance, workflow.importance_reason) == (
        HIGH,
        "Security fix; affected versions should upgrade soon",
    )


@pytest.mark.parametrize(
    "title,files,en,zh",
    [
        # a GitHub action named …/rust-cache is not a change to caching in the release pipeline
        (
            "Update Swatinem/rust-cache action to v2.9.2 (#27568)",
            [mod(".github/workflows/release.yml", 2, 2)],
            "CI-only change (1 file); no runtime code touched",
            "仅改动 CI 配置（1 个文件），不影响运行时代码",
        ),
        # a file named security.py is not a mention of security
        (
            "Tidy the helpers in security.py",
            [mod("src/app/checks.py", 6, 6)],
            "Refactor with a small source change (1 file, +6/−6)",
            "重构，源码改动小（1 个文件，+6/−6）",
        ),
        # an option named prohibit_… is not input newly prohibited
        (
            "Remove prohibit_none_typevar_overlap (#20864)",
            [mod("src/app/subtypes.py", 2, 12)],
            "Removal/deprecation with a small source change (1 file, +2/−12)",
            "移除/弃用，源码改动小（1 个文件，+2/−12）",
        ),
    ],
)
def test_security_words_inside_names_are_not_evidence(title, files, en, zh):
    for lang, reason in (("en", en), ("zh", zh)):
        a = analyse_offline(commit(title), files, lang)
        assert (a.importance, a.importance_reason) == (LOW, reason)


@pytest.mark.parametrize(
    "title,level,en,zh",
    [
        # the program now errors: input refused
        (
            "Error on top-level options in pytest.toml (#14646)",
            MEDIUM,
            "Newly refuses input that was accepted before (“error on”); callers relying on the old leniency fail",
            "开始拒绝以前接受的输入（error on），依赖旧行为的调用会失败",
        ),
        (
            'Emit an error for "raise NotImplemented" (#17890)',
            MEDIUM,
            "Newly refuses input that was accepted before (“error for”); callers relying on the old leniency fail",
            "开始拒绝以前接受的输入（error for），依赖旧行为的调用会失败",
        ),
        # a clearer message for input refused already
        (
            "Raise a better error when a generic alias is used inside `type[]` (#11088)",
            LOW,
            "Change with a small source change (1 file, +9/−3)",
            "其他改动，源码改动小（1 个文件，+9/−3）",
        ),
        # the error is the bug fixed (and a newline escape is no trust boundary)
        (
            "[`pyupgrade`] Fix syntax error on string with newline escape and comment (`UP037`)",
            LOW,
            "Bug fix with a small source change (1 file, +9/−3)",
            "缺陷修复，源码改动小（1 个文件，+9/−3）",
        ),
        (
            "Fix an INTERNAL ERROR when creating cobertura output for namespace package (#20112)",
            LOW,
            "Bug fix with a small source change (1 file, +9/−3)",
            "缺陷修复，源码改动小（1 个文件，+9/−3）",
        ),
    ],
)
def test_an_error_fixed_is_not_input_refused(title, level, en, zh):
    for lang, reason in (("en", en), ("zh", zh)):
        a = analyse_offline(commit(title), [mod("src/app/report.py", 9, 3)], lang)
        assert (a.importance, a.importance_reason) == (level, reason)
