"""Combining facts into a level and its reason: the vLLM reference day, reasons that name the decisive facts,
and depth that follows the level."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import LOW, MEDIUM, commit, mod
from tests.offline.vllm_day import VLLM_DAY


@pytest.mark.parametrize("title,files,reference,expected,ctype", VLLM_DAY, ids=[row[0][:50] for row in VLLM_DAY])
def test_vllm_reference_day(title, files, reference, expected, ctype):
    a = analyse_offline(commit(title), files, "zh")
    assert (a.importance, a.change_type) == (expected, ctype), a.importance_reason
    assert a.importance_reason


def test_vllm_day_agrees_with_the_reference_on_most_commits():
    agree = sum(analyse_offline(commit(t), f, "en").importance is ref for t, f, ref, _, _ in VLLM_DAY)
    # The deliberate disagreements are commented in the table (size alone is never high,
    # tooling-only commits are low).
    assert agree >= len(VLLM_DAY) - 7


def test_reason_joins_specific_facts_and_drops_redundant_size():
    title, files, *_ = VLLM_DAY[0]
    en = analyse_offline(commit(title), files, "en")
    assert "large source change" not in en.importance_reason  # the removal already says it
    title, files, *_ = VLLM_DAY[4]
    en = analyse_offline(commit(title), files, "en")
    assert en.importance_reason == (
        "Deletes 3 public source files (−97 lines); code that still imports them will break; "
        "the title says a default behaviour changes; deployments relying on defaults "
        "are affected"
    )


def test_low_has_type_and_a_one_line_summary_of_the_diff_only():
    body = "The message said ARM was unsupported. It is supported now.\n\nMore details here."
    a = analyse_offline(commit("[Bugfix] Fix display error (#33020)", body), [mod("vllm/platforms/cpu.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.risks == () and a.recommendations == () and a.impact == ""
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    # what the diff shows (the file and its size), not the message's words
    assert a.summary == "Changes `vllm/platforms/cpu.py` (+1/−1 lines)."


def test_no_insights_and_no_risk_when_no_rule_applies():
    a = analyse_offline(
        commit("[ROCm] Enabling forward_includes_kv_cache"),
        [mod("vllm/attn/rocm.py", 38, 12), mod("tests/test_rocm.py", 10)],
        "en",
    )
    assert a.importance is MEDIUM
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    # Nothing specific is known: no risk at all beats a generic one ("new code is unproven").
    assert a.risks == () and a.recommendations == ()
    assert a.impact == "Affects users of ROCm (vllm)."


def test_facts_are_named_in_order_of_seriousness_not_of_evidence_kind():
    # A release-build edit (release evidence) is named before a fixed blow-up (behaviour evidence):
    # the order is each fact's own, not the order of the modules that found them.
    cargo = '@@ -8,2 +8,3 @@ [profile.release]\n codegen-units = 1\n+lto = "fat"\n'
    a = analyse_offline(
        commit("Fix exponential blow-up in narrowing"),
        [mod("src/app/narrow.py", 8, 2), mod("Cargo.toml", 1, 0, cargo)],
        "en",
    )
    assert a.importance is MEDIUM
    assert a.importance_reason == (
        'Changes how shipped artefacts are built (lto = "fat" [profile.release]); every '
        "released binary or package is affected; removes an exponential blow-up or hang "
        "that real inputs hit"
    )


def test_one_generic_risk_and_only_when_nothing_specific_applies():
    big = [mod("src/app/resolve.py", 200, 120), mod(".github/workflows/ci.yml", 2, 1)]
    untested = analyse_offline(commit("fix: resolve markers in order"), big, "en")
    assert untested.importance is MEDIUM
    assert untested.risks == ("+200/−120 source lines changed (src/app/resolve.py) without any test change",)
    # with tests, the CI file it edits is what is left to name; a bug fix alone is no risk
    tested = analyse_offline(commit("fix: resolve markers in order"), big + [mod("tests/test_resolve.py", 30)], "en")
    assert tested.risks == (
        "The pipeline (.github/workflows/ci.yml) changes; a release or check step may fail or be skipped",
    )
    specific = analyse_offline(commit("fix: crash when resolving markers"), big, "en")
    assert specific.risks == (
        "The crash fix in src/app/resolve.py covers the reported case; other inputs reaching it may still crash",
    )


# --- issue 33: a busy day reads as the diffs say, not as the titles' words ------------------------

SMALL = "@@ -3,3 +3,5 @@ def {name}(value):\n     out = value\n+    out = tidy(out)\n+    out = trim(out)\n     return out\n"

HINT_WORDS = [
    "Slack: a refused click is told to its user",
    "Redaction: scrubbed cassette values are not secrets",
    "Every untrusted text goes through the redactor",
    "Feishu: ephemeral refusals per chat (globally only on permission errors)",
    "Fix hanging indentation in the renderer",
    "Thread replies keep the thread's language",
    "Async clock: one lease per window",
    "Reject empty repository names in commands",
    "Default language per channel",
    "Slack sends are crash-safe and keyed",
    "Symlinked worktrees are read like the others",
    "Stream answers without blocking the event loop",
    "Security headline wording",
    "Credential-free fakes for the e2e tests",
]


def test_words_in_small_commits_make_no_mediums_on_a_busy_day():
    """Issue 33: on one busy day 14 of 20 commits were medium, most for a word in the title
    ("refused", "secrets", "untrusted", "hanging", "thread", "default"). A word is a hint the diff
    has to bear out: small diffs with no check, lock, default or sensitive path in them are low —
    unless the commit is a fix, feature or speed-up of shipped code, which is medium for what it is
    ("Fix hanging indentation …" is a fix), never for the word."""
    day = [
        (title, analyse_offline(commit(title), [mod(f"bot/part{i}.py", 2, 0, SMALL.format(name=f"step{i}"))], lang))
        for i, title in enumerate(HINT_WORDS)
        for lang in ("en", "zh")
    ]
    mediums = [(title, a.importance_reason) for title, a in day if a.importance is not LOW]
    assert all(
        reason.startswith(("Bug fix to the code that ships", "缺陷修复，改动随发布交付的代码")) for _, reason in mediums
    ), mediums
    assert {title for title, _ in mediums} == {"Fix hanging indentation in the renderer"}


def test_no_risk_sentence_is_shared_across_a_days_commits():
    """Each risk names what its commit changes: five commits that change diagnostics in five files
    carry five different sentences, not one shared by half the day."""
    titles = [f"Add a diagnostic for {what}" for what in ("aliases", "protocols", "enums", "slots", "overloads")]
    titles += [f"Add {what} support" for what in ("TOML", "YAML", "INI", "JSON5", "HCL")]
    day = [
        analyse_offline(commit(title), [mod(f"src/app/check{i}.py", 80, 5), mod(f"tests/test_check{i}.py", 20)], "en")
        for i, title in enumerate(titles)
    ]
    assert all(a.importance is MEDIUM for a in day)
    shared = Counter(r for a in day for r in set(a.risks))
    assert max(shared.values(), default=0) <= len(day) // 10
