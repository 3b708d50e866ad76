"""Which commit a thread question is about (pure)."""

from bot.channels.threads import ThreadCommit, ThreadInfo, resolve_commit

COMMITS = (
    ThreadCommit(
        "af9b69f977bd1166ed63c46f9ccbd3a02344ae4f",
        "[Quantization][Deprecation] Remove Marlin 24 (#32688)",
        32688,
        "high",
    ),
    ThreadCommit(
        "247d1a3000000000000000000000000000000000", "[Quantization][Deprecation] Remove BitBlas (#32683)", 32683, "high"
    ),
    ThreadCommit(
        "ecb4f822091a64b5084b3a4aff326906487a363f",
        "[CI] Update job dependency syntax for Intel and AMD jobs (#33240)",
        33240,
        "low",
    ),
    ThreadCommit(
        "5914090765fadc44985f7bbbf10750ff3a93bed1",
        "[CI] Update job dependency for hardware and CPU jobs (#33237)",
        33237,
        "low",
    ),
)
INFO = ThreadInfo("vllm-project/vllm", "zh", "Asia/Shanghai", "2026-01-28", COMMITS)


def test_sha_prefix():
    assert resolve_commit("what does af9b69f break?", INFO).sha == COMMITS[0].sha


def test_pr_number():
    assert resolve_commit("#32683 会影响什么", INFO).sha == COMMITS[1].sha


def test_distinctive_title_word_in_a_chinese_question():
    assert resolve_commit("BitBlas 删掉之后还有替代方案吗？", INFO).sha == COMMITS[1].sha


def test_shared_words_are_ambiguous_and_offer_choices():
    r = resolve_commit("why did the job dependency change?", INFO)
    assert r.sha is None and {c.sha for c in r.candidates} == {COMMITS[2].sha, COMMITS[3].sha}


def test_focus_used_for_follow_ups():
    info = ThreadInfo(**{**INFO.__dict__, "focus": COMMITS[2].sha})
    assert resolve_commit("and what about rollback?", info).sha == COMMITS[2].sha


def test_nothing_matches_offers_commits_most_important_first():
    r = resolve_commit("is this safe?", INFO)
    assert r.sha is None and [c.importance for c in r.candidates] == ["high", "high", "low", "low"]


def test_single_commit_thread():
    info = ThreadInfo("a/b", "en", "UTC", "", COMMITS[:1])
    assert resolve_commit("is this safe?", info).sha == COMMITS[0].sha


def test_unknown_sha_is_reported_for_lookup():
    assert resolve_commit("what about 1234567abc?", INFO).outside_ref == "1234567abc"
