"""The entry point: any input gives an analysis, and provenance passes through."""

from __future__ import annotations

from bot.analysis.offline import RULES_VERSION, analyse_offline
from bot.core.models import Coverage, FileChange
from tests.offline.helpers import SRC, commit, mod


def test_awkward_input_still_gives_an_analysis():
    files = [
        FileChange("assets/logo.png", "modified", binary=True),
        mod("src/app/min.js", 1, 1, "@@ -1 +1 @@\n-" + "a" * 50_000 + "\n+b"),
    ]
    for title in ("", "   ", "[", "((((", "Revert", "feat:"):
        a = analyse_offline(commit(title, body="\n\n<!-- -->"), files, "zh")
        assert a.importance_reason and a.summary


def test_provenance_and_coverage_pass_through():
    cov = Coverage(files_total=3, files_shown=2, omitted=(("poetry.lock", "lockfile"),))
    a = analyse_offline(commit("fix: x"), SRC, "en", coverage=cov, origin="fallback", note="LLM timed out")
    assert (a.origin, a.note, a.coverage, a.model) == ("fallback", "LLM timed out", cov, "")
    assert analyse_offline(commit("fix: x"), SRC, "en").origin == "offline"


def test_rules_version_is_a_non_empty_string():
    assert isinstance(RULES_VERSION, str) and RULES_VERSION
