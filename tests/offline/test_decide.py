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
    assert en.importance_reason == ("Deletes 3 public source files (−97 lines); code that still imports them will break; "
                                    "the title says a default behaviour changes; deployments relying on defaults "
                                    "are affected")


def test_low_has_type_and_one_line_summary_only():
    body = "The message said ARM was unsupported. It is supported now.\n\nMore details here."
    a = analyse_offline(commit("[Bugfix] Fix display error (#33020)", body), [mod("vllm/platforms/cpu.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.risks == () and a.recommendations == () and a.impact == ""
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    assert "\n" not in a.summary
    assert a.summary == "The message said ARM was unsupported. It is supported now."


def test_no_insights_and_only_a_located_generic_risk_when_no_rule_applies():
    a = analyse_offline(commit("[ROCm] Enabling forward_includes_kv_cache"),
                        [mod("vllm/attn/rocm.py", 38, 12), mod("tests/test_rocm.py", 10)], "en")
    assert a.importance is MEDIUM
    assert a.insights.architecture == a.insights.performance == a.insights.security == ""
    # Nothing specific is known, so one generic line — and it still names the place.
    assert a.risks == ("vllm/attn/rocm.py is new code; edge cases beyond the author's tests are unproven",)
    assert a.impact == "Affects users of ROCm (vllm)."
