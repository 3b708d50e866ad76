"""Summary and impact sentences, in both languages: whole sentences, who is affected, update lines."""

from __future__ import annotations

import re

import pytest

from bot.analysis.offline import analyse_offline
from bot.core.models import Commit
from tests.offline.helpers import ENTRY_POINTS_V1, HASHES_V1, MEDIUM, WHEN, T, analyse_last, commit, mod
from tests.offline.vllm_day import VLLM_DAY


def test_medium_and_high_carry_summary_impact_and_specific_advice():
    body = (
        "<!-- markdownlint-disable -->\n## Purpose\n\nFIX #33000\n\n"
        "Adds support for FunAudioChat, an audio-language model with continuous and discrete "
        "audio towers.\n\n## Test Plan\n\npytest tests/models"
    )
    title, files, *_ = VLLM_DAY[2]
    zh = analyse_offline(commit(title, body), files, "zh")
    assert zh.importance is MEDIUM
    # What the diff does (the new files, the size), in Chinese; not the author's English text.
    assert zh.summary == (
        "新增文件 `vllm/model_executor/models/funaudiochat.py`、"
        "`vllm/transformers_utils/configs/funaudiochat.py`（+1,169/−1 行，7 个文件）。"
    )
    assert "Adds support" not in zh.summary and "pytest" not in zh.summary
    assert zh.impact == "影响：vllm 的使用者。"
    assert "新增 2 个源码文件（+1,120 行）" in zh.insights.architecture
    en = analyse_offline(commit(title, body), files, "en")
    assert en.summary == (
        "Adds the files `vllm/model_executor/models/funaudiochat.py`, "
        "`vllm/transformers_utils/configs/funaudiochat.py` (+1,169/−1 lines, 7 files)."
    )
    assert en.impact == "Affects users of vllm."


def _allowed_words(commit_: Commit, files) -> set[str]:
    words = set(re.findall(r"[A-Za-z]+", commit_.title + " " + commit_.body))
    for f in files:
        words |= set(re.findall(r"[A-Za-z]+", f.path + " " + (f.previous_path or "") + " " + (f.patch or "")))
    return words | {"API", "CI", "GPU", "Bug"}


@pytest.mark.parametrize(
    "row",
    VLLM_DAY
    + [
        (
            "feat!: drop v1",
            [
                mod("src/app/api.py", 300, 40),
                mod("requirements.txt", 1, 1, "@@ -1 +1 @@\n-pydantic==1.10\n+pydantic==2.7\n"),
            ],
            None,
            None,
            None,
        ),
        ("Fix CVE-2025-1 in auth", [mod("src/app/auth.py", 3, 1), mod("Dockerfile", 1, 1)], None, None, None),
    ],
    ids=lambda row: row[0][:40],
)
def test_both_languages_give_full_texts_and_zh_has_no_english(row):
    title, files = row[0], row[1]
    c = commit(title)
    zh, en = analyse_offline(c, files, "zh"), analyse_offline(c, files, "en")
    assert (zh.importance, zh.change_type) == (en.importance, en.change_type)
    assert zh.importance_reason and en.importance_reason and zh.summary and en.summary
    assert len(zh.risks) == len(en.risks) and len(zh.recommendations) == len(en.recommendations)
    allowed = _allowed_words(c, files)
    zh_text = " ".join(
        [
            zh.importance_reason,
            zh.summary,
            zh.impact,
            *zh.risks,
            *zh.recommendations,
            zh.insights.architecture,
            zh.insights.performance,
            zh.insights.security,
        ]
    )
    leaked = {w for w in re.findall(r"[A-Za-z]+", zh_text) if w not in allowed}
    assert not leaked
    assert re.search(r"[\u4e00-\u9fff]", zh.importance_reason)
    assert not re.search(r"[\u4e00-\u9fff]", " ".join([en.importance_reason, en.summary, *en.risks]))


LONG_BODY = (
    "The resolver used to pick the first candidate it saw, even when a later index had a better "
    "match for the requested markers, which made installs depend on index order. It now ranks "
    "candidates by marker specificity before index order, and only falls back to index order when two "
    "candidates are equally specific. Ties are broken by version, newest first, as before. The "
    "behaviour for single-index setups does not change at all, and neither does the lockfile format. "
    "A follow-up will expose the ranking in the verbose output so that users can see why a candidate "
    "won over another one."
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_says_what_the_diff_does_not_what_the_message_says(repo, lang):
    repo.commit(
        f"Rank candidates by marker specificity\n\n{LONG_BODY}",
        {"src/app/entry_points.py": ENTRY_POINTS_V1 + "\n\ndef rank(c):\n    return c\n" * 30},
        when=WHEN,
    )
    a = analyse_last(repo, lang)
    assert (
        a.summary
        == {
            "en": "Adds `rank` (`src/app/entry_points.py`, +120/−0 lines).",
            "zh": "新增 `rank`（`src/app/entry_points.py`，+120/−0 行）。",
        }[lang]
    )
    assert "…" not in a.summary and "resolver" not in a.summary.lower()


def test_renovate_body_becomes_a_version_line(repo):
    body = (
        "This PR contains the following updates:\n\n| Package | Type | Update | Change |\n|---|---|---|---|\n"
        "| [serde](https://serde.rs) ([source](https://github.com/serde-rs/serde)) | workspace.dependencies "
        "| patch | `1.0.228` -> `1.0.229` |\n\n---\n\n### Release Notes\n\n<details>\n<summary>serde-rs/serde "
        "(serde)</summary>\n\nlots of notes\n</details>\n\n---\n\n### Configuration\n\n📅 **Schedule**: "
        'Branch creation - "before 4am on Monday"\n\n🚦 **Automerge**: Disabled by config.\n'
    )
    repo.commit(
        f"Update Rust crate serde to v1.0.229\n\n{body}",
        {"uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.229"\n'},
        when=WHEN,
        author="renovate[bot]",
    )
    a = analyse_last(repo)
    assert a.summary == "Updates `serde` 1.0.228 → 1.0.229 (`uv.lock`, +1/−1 lines)."
    assert analyse_last(repo, "zh").summary == "更新 `serde` 1.0.228 → 1.0.229（`uv.lock`，+1/−1 行）。"


def test_lockfile_diff_names_the_update_when_the_body_is_empty(repo):
    repo.commit(
        "Bump serde",
        {"uv.lock": 'version = 1\n\n[[package]]\nname = "serde"\nversion = "1.0.230"\n'},
        when=WHEN,
        author="dependabot[bot]",
    )
    assert analyse_last(repo).summary == "Updates `serde` 1.0.228 → 1.0.230 (`uv.lock`, +1/−1 lines)."


def test_a_revert_is_summarised_as_what_it_reverts(repo):
    first = repo.commit(
        "Make Resolver hashable", {"src/app/hashes.py": HASHES_V1 + "\n\ndef h():\n    return 1\n"}, when=WHEN
    )
    repo.commit(
        f'Revert "Make Resolver hashable"\n\nThis reverts commit {first}.', {"src/app/hashes.py": HASHES_V1}, when=WHEN
    )
    en, zh = analyse_last(repo), analyse_last(repo, "zh")
    assert en.change_type is T.REVERT
    assert en.summary == f"Reverts `{first[:7]}`; removes `h` (`src/app/hashes.py`, +0/−4 lines)."
    assert zh.summary == f"撤销提交 `{first[:7]}`；删除 `h`（`src/app/hashes.py`，+0/−4 行）。"
