"""The small-model checks of issue 25, one function at a time: the answer's language, filler read
as nothing, a reason that is the title, a headline bullet that copies its commit row, and the
tokens ratio bounded by kind of text. (End to end through the fake endpoint: test_small_model.py.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.analysis.answer_schema import is_none_like, repeats_title
from bot.analysis.language import MIN_WORDS, prose_counts, wrong_language
from bot.analysis.summary import copies_row
from bot.analysis.tokens_ratio import CJK_HIGH, CJK_LOW, TokensRatio
from bot.core.models import Commit

# --- language ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, lang, wrong",
    [
        ("修复了 resolver 在 exclude-newer 时的回归", "zh", False),  # Chinese prose keeps English terms
        ("修复 uv pip install 在 Windows 上的 bug", "zh", False),
        ("允许按包禁用 exclude-newer 设置，影响 resolver 配置的用户需要检查 pyproject.toml", "zh", False),
        ("Re-enable pyx integration tests so that CI covers the upload path", "zh", True),
        ("Allow disabling exclude-newer per package in the resolver configuration", "zh", True),
        ("Adds `uv audit` (#17414)", "zh", False),  # too little prose to judge
        ("This commit changes the export path; scripts reading its output may need updating.", "en", False),
        ("本次提交重新启用了 pyx 集成测试，确保 CI 覆盖上传路径。", "en", True),
        ("Fixes the bug reported in “修复构建”", "en", False),  # a quoted Chinese title is fine
        ("Fixes “修复构建失败的问题” in CI", "en", False),
        ("修改了 src/widgets/cli.py，对应“feat: add a --since flag to the export command”。", "zh", False),
        ("提交“Allow disabling exclude-newer per package in the resolver”修改了解析器", "zh", False),
        ("Bonjour tout le monde, ceci est un test", "fr", False),  # a language the bot does not speak: never judged
    ],
)
def test_wrong_language(text, lang, wrong):
    assert wrong_language(text, lang) is wrong


def test_code_is_not_prose():
    cjk, latin = prose_counts(
        "改动 `parse_column_value()` 与 crates/uv-resolver/src/lib.rs、snake_case_name、camelCase v1.2.3 #42 abcdef1"
    )
    assert (cjk, latin) == (3, 0)


def test_the_thresholds_at_their_edges():
    # Chinese: wrong once English words reach MIN_WORDS and outnumber twice the Chinese characters
    assert not wrong_language("one two three", "zh")  # under MIN_WORDS in all
    assert wrong_language(" ".join(["word"] * MIN_WORDS), "zh")
    assert not wrong_language("中文 " + " ".join(["word"] * 2), "zh")  # 2 Chinese vs 2 words: kept
    assert not wrong_language("中 " + " ".join(["word"] * 3), "zh")  # 3 words: under MIN_WORDS
    assert wrong_language("中文 " + " ".join(["word"] * 5), "zh")  # 2 × 2 < 5
    assert not wrong_language("中文 word word word word", "zh")  # 2 × 2 = 4, not under 4
    # English: wrong once Chinese reaches 2 × MIN_WORDS characters and outnumbers twice the words
    assert not wrong_language("中文中文中文中", "en")  # 7 characters
    assert wrong_language("中文中文中文中文", "en")  # 8
    assert not wrong_language("中文中文中文中文 word word word word", "en")  # 8 = 2 × 4: kept


# --- filler, titles, copied rows ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<无>",
        "‹none›",
        "No further recommendations needed.",
        "No additional risks identified",
        "Nothing to add.",
        "无需进一步建议",
        "暂无其他风险",
        "No action required",
        "No risks are expected",
        "None",
        "N/A",
    ],
)
def test_filler_is_nothing(text):
    assert is_none_like(text)


@pytest.mark.parametrize(
    "text",
    [
        "Add a test for export()",
        "Not needed for now but document the flag",
        "无需修改调用方，但要更新文档",
        "<b>bold</b> claim",
    ],
)
def test_advice_is_not_filler(text):
    assert not is_none_like(text)


def commit(title: str) -> Commit:
    return Commit(
        repo="o/r", sha="a" * 40, title=title, body="", author="x", committed_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


def test_a_reason_that_is_the_title():
    c = commit("Allow disabling `exclude-newer` per package (#17414)")
    assert repeats_title("Allow disabling exclude-newer per package.", c)
    assert repeats_title("allow disabling `exclude-newer` per package (#17414)", c)
    assert not repeats_title("Per-package opt-out changes resolution for users who pin dates.", c)
    assert not repeats_title("", commit(""))


ROWS = (
    "- [medium] feature | Re-enable pyx integration tests (#17414) | summary: 重新启用 pyx 集成测试，覆盖上传路径的全部分支和错误处理 "
    "| why: 测试覆盖增加，发布流程更可靠 | risks: CI 时间变长\n"
    "- [low] docs | docs: explain exclude-newer for every package in the settings reference page | summary: 文档"
)


@pytest.mark.parametrize(
    "bullet, copied",
    [
        ("[medium] feature | Re-enable pyx integration tests (#17414) | summary: 重新启用 pyx 集成测试", True),
        ("Re-enable pyx integration tests | why: 测试覆盖增加", True),
        (
            "重新启用 pyx 集成测试，覆盖上传路径的全部分支和错误处理",
            True,
        ),  # a row's summary whole (20+ Chinese characters)
        ("docs: explain exclude-newer for every package in the settings reference page", False),  # a title named
        ("重新启用了 pyx 集成测试，CI 会更慢。", False),  # the model's own sentence
        ("pyx integration tests", False),
    ],
)
def test_a_bullet_that_copies_its_row(bullet, copied):
    assert copies_row(bullet, ROWS) is copied


# --- the tokens ratio, by kind of text --------------------------------------------------------------------


def test_one_kind_of_text_bounds_its_own_ratio():
    ratio = TokensRatio()
    assert ratio.bound == 1.0 and not ratio.learnt
    ratio.observe(0.0, 1000.0, 760.0)
    assert ratio.learnt and ratio.bound == pytest.approx(0.76)
    ratio.observe(0.0, 1000.0, 830.0)
    assert ratio.bound == pytest.approx(0.83)  # the higher count bounds it


def test_a_mixed_count_bounds_any_mix_until_the_kinds_are_told_apart():
    ratio = TokensRatio()
    cjk, rest = 2000.0, 900.0  # a Chinese prompt with a small diff: Qwen counts 0.58 and 0.76
    ratio.observe(cjk, rest, 0.58 * cjk + 0.76 * rest)
    mean = (0.58 * cjk + 0.76 * rest) / (cjk + rest)
    share = cjk / (cjk + rest)
    worst = max(mean / (share * CJK_LOW + 1 - share), CJK_HIGH * mean / (share * CJK_HIGH + 1 - share))
    assert ratio.bound == pytest.approx(worst)
    assert ratio.bound >= 0.76  # a prompt of all diff fits under it
    # a second prompt, mostly diff: the two ratios are fitted and the larger bounds every mix
    ratio.observe(2000.0, 8000.0, 0.58 * 2000 + 0.76 * 8000)
    assert ratio.bound == pytest.approx(0.76, abs=1e-6)


def test_counts_of_the_same_mix_are_not_fitted():
    ratio = TokensRatio()
    ratio.observe(2000.0, 1000.0, 2000.0)
    first = ratio.bound
    ratio.observe(4000.0, 2000.0, 4000.0)  # the same share: nothing tells the kinds apart
    assert ratio.bound == pytest.approx(first)


def test_small_prompts_and_misreports_teach_nothing_wrong():
    ratio = TokensRatio()
    ratio.observe_texts(["hi"], 4, 50)  # under MIN_TOKENS: template overhead, no evidence
    assert not ratio.learnt
    ratio.observe(0.0, 1000.0, 100000.0)
    assert ratio.bound == 4.0  # clamped
    ratio = TokensRatio()
    ratio.remembered(0.9)
    assert ratio.bound == pytest.approx(0.9)


def test_texts_are_split_by_kind():
    ratio = TokensRatio()
    ratio.observe_texts(["这是一个很长的中文句子" * 40, "def parse(row):\n    return row\n" * 40], 8, 1500)
    assert ratio.learnt and 0.5 <= ratio.bound <= 4.0


def test_english_is_wrong_only_when_chinese_outweighs_it_twice():
    assert wrong_language("中文中文中文中文 word word word", "en")  # 8 > 2 × 3
    assert not wrong_language("中文中文中文中文 word word word word word", "en")  # 8 < 2 × 5


def test_the_language_a_retry_names():
    from bot.analysis.language import language_name

    assert language_name("zh") == "Simplified Chinese (简体中文)" and language_name("en") == "English"


def test_a_fit_never_bounds_below_a_count_of_one_kind():
    ratio = TokensRatio()
    ratio.observe(0.0, 1000.0, 900.0)  # English alone, counted high
    ratio.observe(2000.0, 1000.0, 0.58 * 2000 + 0.76 * 1000)
    ratio.observe(1000.0, 4000.0, 0.58 * 1000 + 0.76 * 4000)
    assert ratio.bound == pytest.approx(0.9)  # the fit's 0.76-ish is floored by the pure count
    chinese = TokensRatio()
    chinese.observe(4000.0, 0.0, 4000.0)  # Chinese alone at 1.0
    chinese.observe(2000.0, 2000.0, 0.6 * 2000 + 0.8 * 2000)
    chinese.observe(500.0, 4000.0, 0.6 * 500 + 0.8 * 4000)
    assert chinese.bound == pytest.approx(1.0)


def test_a_fit_that_makes_no_sense_falls_back_to_the_worst_case():
    ratio = TokensRatio()
    ratio.observe(1000.0, 1000.0, 500.0)
    ratio.observe(100.0, 1000.0, 1100.0)  # least squares would give Chinese a negative ratio
    second = CJK_HIGH * 1.0 / (100 / 1100 * CJK_HIGH + 1000 / 1100)  # its worst case, Chinese dear
    assert ratio.bound == pytest.approx(second)  # not the negative fit, not the first count's 0.25


@pytest.mark.parametrize(
    "share, factor",
    [
        (0.04, 1.0),  # one kind: its own ratio
        (0.96, 1.0),
        (0.1, CJK_HIGH / (0.1 * CJK_HIGH + 0.9)),  # little Chinese: as dear as it may be bounds it
        (0.7, 1 / (0.7 * CJK_LOW + 0.3)),  # much Chinese: as cheap as it may be bounds the rest
    ],
)
def test_the_worst_case_of_one_count(share, factor):
    ratio = TokensRatio()
    ratio.observe(share * 1000, (1 - share) * 1000, 700.0)
    assert ratio.bound == pytest.approx(0.7 * factor)


def test_one_english_risk_in_a_chinese_answer_is_named():
    from bot.analysis.answer_schema import foreign_field
    from bot.core.models import Analysis, ChangeType, Importance

    analysis = Analysis(
        change_type=ChangeType.FEATURE,
        importance=Importance.MEDIUM,
        importance_reason="为公开的命令行新增了一个选项。",
        summary="为 export 命令新增 --since 参数。",
        risks=("日期解析因地区设置而异。", "Scripts that parse the export output may break"),
    )
    assert foreign_field(analysis, "zh") == "risks"
    assert foreign_field(analysis, "en") == "importance_reason"
