"""The Downstream section and the card flag on every surface (pure renderers): what the reader sees,
within each platform's limits, untrusted paths inert."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

from bot.core.chat_platform import CommitDetail, DigestParent
from bot.core.models import (
    Analysis,
    ChangeType,
    Commit,
    Digest,
    DigestEntry,
    Downstream,
    ForkInfo,
    Importance,
    digest_from_dict,
    to_dict,
)
from bot.core.window import day_window
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from tests.shared.feishu_render import assert_fits, assert_inert, markdown_of
from tests.shared.slack_render import check, visible

WHEN = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)
URL = "https://github.com/acme/rocket"


def entry(n: int, importance=Importance.HIGH, downstream: Downstream | None = None, title: str = "") -> DigestEntry:
    sha = f"{n:040x}"
    c = Commit(
        repo="acme/rocket",
        sha=sha,
        title=title or f"feat: change {n}",
        body="",
        author="Ada",
        committed_at=WHEN - timedelta(minutes=n),
        url=f"{URL}/commit/{sha}",
    )
    a = Analysis(
        change_type=ChangeType.FEATURE, importance=importance, importance_reason="Public API.", summary="Adds a flag."
    )
    return DigestEntry(c, a, downstream=downstream)


def make(entries, lang="en", fork=True) -> Digest:
    info = ForkInfo(name="org/our-fork", branch="main", merge_base="b" * 40, files=12) if fork else None
    return Digest(
        repo="acme/rocket",
        branch="main",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang=lang,
        entries=tuple(entries),
        repo_url=URL,
        fork=info,
    )


CONFLICT = Downstream(("vllm/engine/arg_utils.py",), True, 3)
CLEAN = Downstream(("vllm/config.py", "setup.py"), False, 2)


def sample(lang="en") -> Digest:
    return make([entry(1, downstream=CLEAN), entry(2, downstream=CONFLICT), entry(3, Importance.LOW)], lang)


def test_markdown_section_and_flags():
    out = render_report([sample()])
    section = out.split("### ⬇️ Downstream: org/our-fork@main", 1)[1].split("\n### ", 1)[0]
    assert (
        "org/our-fork@main patches 12 files since its merge base bbbbbbb with upstream; "
        "2 of these commits touch them, 1 conflict." in section
    )
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 and "feat: change 2" in lines[0]  # the conflict first
    assert "⚠️ touches vllm/engine/arg\\_utils.py, which org/our-fork@main patches in 3 hunks — conflicts" in lines[0]
    assert (
        "ℹ️ touches vllm/config.py, setup.py, which org/our-fork@main patches in 2 hunks — applies cleanly" in lines[1]
    )
    assert "](#feat-change-2)" in lines[0]  # the link reaches the commit's own heading
    card = out.split("#### feat: change 2", 1)[1].split("---", 1)[0]
    assert "⚠️ Downstream conflict: cherry-picking onto org/our-fork@main conflicts (vllm/engine/arg\\_utils.py)" in card
    assert "Downstream" not in out.split("#### feat: change 3", 1)[1]


def test_markdown_without_a_fork_has_no_section():
    out = render_report([make([entry(1)], fork=False)])
    assert "Downstream" not in out and "⬇️" not in out


def test_markdown_when_nothing_touches_the_fork():
    out = render_report([make([entry(1)])])
    assert "No commit here touches a file org/our-fork@main patches (12 files since its merge base bbbbbbb)." in out


def test_slack_digest_and_card():
    payloads = S.render(DigestParent(sample()))
    check(payloads)
    seen = visible(payloads)
    assert "⬇️Downstream:org/our-fork@main" in seen
    assert "⚠️touchesvllm/engine/arg_utils.py,whichorg/our-fork@mainpatchesin3hunks—conflicts" in seen
    card = S.render(CommitDetail(sample(), sample().entries[1]))
    check(card)
    assert "⚠️Downstreamconflict:cherry-pickingontoorg/our-fork@mainconflicts(vllm/engine/arg_utils.py)" in visible(card)
    assert "Downstream" not in visible(S.render(CommitDetail(sample(), sample().entries[2])))


def test_feishu_digest_and_card_in_chinese():
    d = sample("zh")
    cards = F.render_cards(DigestParent(d))
    assert_fits(cards)
    text = markdown_of(cards).replace("\u200b", "")  # the zero-width space that keeps @ from mentioning
    assert "⬇️ 下游：org/our-fork@main" in text
    assert "冲突" in text and "3 处修改" in text
    card = F.render_cards(CommitDetail(d, d.entries[1]), thread="om_1")
    assert "⚠️ 下游冲突" in markdown_of(card)


def test_untrusted_paths_stay_inert():
    evil = Downstream(("<!channel> [x](https://evil.example) <at id=all></at>.py",), True, 1)
    d = make([entry(1, downstream=evil)])
    assert "[x](https://evil" not in render_report([d])
    payloads = S.render(DigestParent(d))
    assert "<!channel>" not in json.dumps(payloads)
    assert_inert(F.render_cards(DigestParent(d)))


def test_many_flagged_commits_fit_every_platform():
    d = make(
        [
            entry(i, downstream=Downstream(tuple(f"pkg/module_{i}_{j}.py" for j in range(20)), i % 2 == 0, 40))
            for i in range(80)
        ]
    )
    check(S.render(DigestParent(d)))
    assert_fits(F.render_cards(DigestParent(d)))


def test_json_entries_carry_downstream_and_survive_the_cache():
    d = sample()
    data = json.loads(render_json([d]))["digests"][0]
    by_title = {e["commit"]["title"]: e for e in data["entries"]}
    assert by_title["feat: change 2"]["downstream"] == {
        "patched_files": ["vllm/engine/arg_utils.py"],
        "conflict": True,
        "hunks": 3,
    }
    assert "downstream" not in by_title["feat: change 3"]
    assert data["fork"] == {"name": "org/our-fork", "branch": "main", "merge_base": "b" * 40, "files": 12}
    assert digest_from_dict(to_dict(d)) == d
