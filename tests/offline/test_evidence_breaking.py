"""Breaking changes the author declares."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import HIGH, LOW, commit, mod


@pytest.mark.parametrize(
    "title,body",
    [
        ("feat!: rename the config keys", ""),
        ("refactor(api)!: drop positional arguments", ""),
        ("Rework the plugin loader", "Plugins now load lazily.\n\nBREAKING CHANGE: `load_all()` is gone."),
        ("[Core] Breaking: plugins must declare a version", ""),
    ],
)
def test_breaking_markers_are_high(title, body):
    a = analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en")
    assert a.importance is HIGH
    assert "breaking change" in a.importance_reason
    assert any("breaking change" in r for r in a.risks)


@pytest.mark.parametrize(
    "title,body",
    [
        ("Make the loader non-breaking for old plugins", ""),
        ("Rework the plugin loader", "## Type\n- [ ] Breaking change\n- [x] Bug fix"),
    ],
)
def test_negated_or_unticked_breaking_is_not_a_marker(title, body):
    assert analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], "en").importance is LOW


DECLARED = (
    "The commit declares a breaking change; callers may need changes after upgrading",
    "提交自称不兼容变更，升级后调用方可能需要修改",
)


@pytest.mark.parametrize(
    "title,body",
    [
        ("[Breaking] Remove the v1 loader", ""),
        ("Breaking: remove load_all()", ""),
        ("Drop the positional arguments (breaking)", ""),
        ("BREAKING: plugins must declare a version", ""),
        ("Rework the plugin loader", "## Type\n- [x] Breaking change (existing callers need changes)\n- [ ] Bug fix"),
    ],
)
def test_declarations_say_so_in_both_languages(title, body):
    for lang, reason in zip(("en", "zh"), DECLARED):
        a = analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], lang)
        assert (a.importance, a.importance_reason) == (HIGH, reason)


def test_a_format_of_a_file_named_breaking_is_not_a_breaking_change():
    """Issue 24: `ruff format` of breaking.py was the day's first high — only the file name said
    'breaking'."""
    files = [mod("bot/analysis/offline/evidence/breaking.py", 2, 6)]
    en = analyse_offline(commit("ruff format: breaking.py"), files, "en")
    zh = analyse_offline(commit("ruff format: breaking.py"), files, "zh")
    assert (en.importance, en.importance_reason) == (
        LOW,
        "Formatting, spelling or lint change (+2/−6 source lines) with no behaviour change",
    )
    assert (zh.importance, zh.importance_reason) == (LOW, "格式、拼写或代码检查类改动（源码 +2/−6 行），不改变行为")
    assert not any("breaking" in r for r in en.risks)


@pytest.mark.parametrize(
    "title,body",
    [
        # the word inside a name: a file, a path, an identifier, a code span
        ("Run `ruff format` on bot/analysis/offline/evidence/breaking.py", ""),
        ("Add cases to tests/breaking_test.rs and test_breaking", ""),
        ("Handle `breaking` in the changelog parser", ""),
        ("Fix is_breaking for bracket tags", ""),
        ("Rename BREAKING-CHANGES.md", ""),
        (
            "Rework the plugin loader",
            "- [x] breaking.py reformatted\n- [x] Breaking changes are documented\n\nSee BREAKING-CHANGES.md",
        ),
        # the word in its other senses: nothing is declared about callers
        ("Avoid breaking call chains unnecessarily", ""),
        ("Prevent parametrize with scope from breaking fixture dependencies (#13249)", ""),
        ("[non-breaking] Tidy the loader", ""),
    ],
)
def test_the_word_in_a_name_or_another_sense_is_not_a_declaration(title, body):
    for lang in ("en", "zh"):
        a = analyse_offline(commit(title, body), [mod("src/app/plugins.py", 6, 2)], lang)
        assert a.importance is LOW, a.importance_reason
        assert a.importance_reason not in DECLARED
