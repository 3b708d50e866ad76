"""Combining facts into a level and its reason: the vLLM reference day, reasons that name the decisive facts,
and depth that follows the level."""

from __future__ import annotations

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


def test_low_has_type_and_one_line_summary_only():
    body = "The message said ARM was unsupported. It is supported now.\n\nMore details here."
    a = analyse_offline(commit("[Bugfix] Fix display error (#33020)", body), [mod("vllm/platforms/cpu.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.risks == () and a.recommendations == () and a.impact == ""
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    assert "\n" not in a.summary
    assert a.summary == "The message said ARM was unsupported. It is supported now."


def test_no_insights_and_only_a_located_generic_risk_when_no_rule_applies():
    a = analyse_offline(
        commit("[ROCm] Enabling forward_includes_kv_cache"),
        [mod("vllm/attn/rocm.py", 38, 12), mod("tests/test_rocm.py", 10)],
        "en",
    )
    assert a.importance is MEDIUM
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    # Nothing specific is known, so one generic line — and it still names the place.
    assert a.risks == ("vllm/attn/rocm.py is new code; edge cases beyond the author's tests are unproven",)
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
    tested = analyse_offline(commit("fix: resolve markers in order"), big + [mod("tests/test_resolve.py", 30)], "en")
    assert tested.risks == ("Callers that relied on the old behaviour of src/app/resolve.py now get different results",)
    specific = analyse_offline(commit("fix: crash when resolving markers"), big, "en")
    assert specific.risks == (
        "The fix covers the reported case; other inputs reaching src/app/resolve.py may still crash",
    )
