"""Breaking changes the author declares."""
from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import HIGH, LOW, commit, mod


@pytest.mark.parametrize("title,body", [
    ("feat!: rename the config keys", ""),
    ("refactor(api)!: drop positional arguments", ""),
    ("Rework the plugin loader", "Plugins now load lazily.\n\nBREAKING CHANGE: `load_all()` is gone."),
    ("[Core] Breaking: plugins must declare a version", ""),
])
def test_breaking_markers_are_high(title, body):
    a = analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en")
    assert a.importance is HIGH
    assert "breaking change" in a.importance_reason
    assert any("breaking change" in r for r in a.risks)


@pytest.mark.parametrize("title,body", [
    ("Make the loader non-breaking for old plugins", ""),
    ("Rework the plugin loader", "## Type\n- [ ] Breaking change\n- [x] Bug fix"),
])
def test_negated_or_unticked_breaking_is_not_a_marker(title, body):
    assert analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en").importance is LOW
