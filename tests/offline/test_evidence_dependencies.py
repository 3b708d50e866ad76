"""Dependencies: major bumps from titles and manifests."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline, is_major_bump
from tests.offline.helpers import HIGH, LOW, MEDIUM, T, commit, mod


@pytest.mark.parametrize(
    "title,patch,expected",
    [
        ("Bump numpy from 1.26.4 to 2.0.0", None, MEDIUM),
        ("Bump numpy from 1.26.4 to 1.26.5", None, LOW),
        ("Update dependency eslint to v9", None, MEDIUM),  # Renovate's name for a major update
        ("Update dependency eslint to v8.57.1", None, LOW),
        # A floor across a major version leaves the old installs behind: high (round 6, test_evidence_round6.py).
        ("Update requirements", "@@ -1,2 +1,2 @@\n-pydantic>=1.10,<2\n+pydantic>=2.7,<3\n torch==2.9.0\n", HIGH),
        ("Update requirements", "@@ -1,1 +1,1 @@\n-httpx>=0.26,<1\n+httpx>=0.28.1,<1\n", MEDIUM),  # 0.x minors break
        ("Update requirements", "@@ -1,1 +1,1 @@\n-torch==2.8.0\n+torch==2.9.0\n", LOW),
    ],
)
def test_dependency_major_bumps(title, patch, expected):
    a = analyse_offline(commit(title), [mod("requirements.txt", 1, 1, patch)], "en")
    assert (a.change_type, a.importance) == (T.DEPENDENCIES, expected), a.importance_reason
    if expected is HIGH:
        assert "Raises the minimum of pydantic from 1.10 to 2.7" in a.importance_reason
    if expected is not LOW:
        assert any("changelog" in r for r in a.recommendations)


@pytest.mark.parametrize(
    "old,new,major",
    [
        ("1.26.4", "2.0.0", True),
        ("1.2", "1.3", False),
        ("0.3.1", "0.4.0", True),
        ("0.3.1", "0.3.2", False),
        ("", "9", True),
    ],
)
def test_is_major_bump(old, new, major):
    assert is_major_bump(old, new) is major
