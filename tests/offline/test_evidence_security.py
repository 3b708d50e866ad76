"""Security: claimed fixes, mentions, trust boundaries, refused input, sensitive paths."""
from __future__ import annotations

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import ENTRY_POINTS_V1, HASHES_V1, HIGH, LOW, MEDIUM, T, WHEN, analyse_last, commit, mod


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
    repo.commit("Reject case-variant reserved entry points (#2001)",
                {"src/app/entry_points.py": ENTRY_POINTS_V1.replace("if name in RESERVED", "if name.lower() in RESERVED")},
                when=WHEN)
    a = analyse_last(repo)
    assert a.importance is HIGH, a.importance_reason
    assert "reserved" in a.importance_reason
    assert any("refused" in r for r in a.risks)


def test_md5_only_hashes_rejected_under_require_hashes_is_high(repo):
    repo.commit("Reject MD5-only hashes under --require-hashes",
                {"src/app/hashes.py": HASHES_V1.replace(
                    "    return True\n",
                    "    if require_hashes and set(hashes) == {'md5'}:\n        return False\n    return True\n")},
                when=WHEN)
    a = analyse_last(repo, "zh")
    assert a.importance is HIGH, a.importance_reason
    assert "md5" in a.importance_reason.lower()


def test_hardening_the_release_pipeline_is_a_floor_not_a_ceiling():
    hardening = analyse_offline(commit("Harden the release workflow permissions"),
                                [mod(".github/workflows/release.yml", 6, 3)], "en")
    assert hardening.importance is MEDIUM
    assert hardening.importance_reason.startswith("Hardens the release pipeline")
    other_ci = analyse_offline(commit("Harden the lint workflow permissions"), [mod(".github/workflows/lint.yml", 6, 3)], "en")
    assert other_ci.importance is LOW
