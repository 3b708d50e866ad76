"""The one place corrections change what a digest shows: laid over the digest after the cache
(`DigestBuilder.build`), idempotent and reversible, carried through to_dict / from_dict, and what
the weekly roll-up and the renderers then show."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.core.chat_platform import DigestParent, WeekRollup
from bot.core.models import Importance, digest_from_dict, to_dict
from bot.core.window import day_window
from bot.levels.overlay import correct, overlay, overlay_content
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from bot.render.text import render_text
from bot.taste.corrections import Correction
from tests.gitrepo import GitRepo
from tests.reportdata import day


def fix(sha: str, level: str, who: str = "U0ANA") -> Correction:
    return Correction("acme/widgets", sha, level, who, "", datetime(2026, 1, 29, tzinfo=UTC))


def test_overlay_moves_counts_and_groups_and_survives_a_round_trip():
    d = day(3)  # high, medium, low
    high, medium, _low = d.entries
    corrected = overlay(d, {medium.commit.sha: fix(medium.commit.sha, "low")})
    again = digest_from_dict(to_dict(corrected))  # the shape kept in Redis and printed as JSON
    for shown in (corrected, again):
        entry = shown.entries[1]
        assert (entry.importance, entry.corrected_by, entry.corrected_from) == (
            Importance.LOW,
            "U0ANA",
            Importance.MEDIUM,
        )
        assert [shown.count(i) for i in Importance] == [1, 0, 2]
        assert [len(e) for _, e in shown.grouped()] == [1, 0, 2]
    # idempotent, and a later correction replaces the earlier one (from the analysis's level)
    assert overlay(corrected, {medium.commit.sha: fix(medium.commit.sha, "low")}) == corrected
    raised = overlay(corrected, {medium.commit.sha: fix(medium.commit.sha, "high", "U0BOB")}).entries[1]
    assert (raised.importance, raised.corrected_by, raised.corrected_from) == (
        Importance.HIGH,
        "U0BOB",
        Importance.MEDIUM,
    )
    # back at the analysis's own level (or no correction at all): nothing is said
    for effective in ({medium.commit.sha: fix(medium.commit.sha, "medium")}, {}):
        back = overlay(corrected, effective).entries[1]
        assert (back.importance, back.corrected_by, back.corrected_from) == (Importance.MEDIUM, "", None)
    assert correct(high, None, "en") == high


def test_every_renderer_says_who_corrected_it_and_from_what():
    d = day(3)
    medium = d.entries[1]
    corrected = overlay(d, {medium.commit.sha: fix(medium.commit.sha, "high")})
    line = "✏️ Level corrected to 🔴 High by U0ANA (was 🟡 Medium)"
    assert f"> {line}" in render_report([corrected])
    from bot.core.chat_platform import CommitDetail, DigestParent

    entry = corrected.entries[1]
    assert line in render_text(CommitDetail(corrected, entry))
    assert "🔴 high 2 | 🟡 medium 0" in S.unescape(str(S.render(DigestParent(corrected))))  # counted with the highs
    slack = S.unescape(str(S.render(CommitDetail(corrected, entry))))
    assert "✏️ Level corrected to 🔴 High by <@U0ANA> (was 🟡 Medium)" in slack  # a Slack id: a mention
    feishu = "\n".join(F.all_markdown(F.render_cards(CommitDetail(corrected, entry))))
    assert "Level corrected to 🔴 High by U0ANA (was 🟡 Medium)" in feishu
    week = WeekRollup(corrected, (("src", (entry,)),))
    assert line in render_text(week) and "<@U0ANA>" in S.unescape(str(S.render(week)))
    zh = overlay(day(3, lang="zh"), {medium.commit.sha: fix(medium.commit.sha, "low", "ou_ana")})
    assert "✏️ 等级已由 <at id=ou_ana></at> 纠正为 🟢 低（原为 🟡 中）" in "\n".join(
        F.all_markdown(F.render_cards(CommitDetail(zh, zh.entries[1])))
    )
    assert overlay_content(week, {}) == WeekRollup(d, ((("src", (d.entries[1],)),)))


async def test_a_cached_digest_shows_corrections_made_after_it_was_cached(tmp_path, make_services):
    repo = GitRepo(tmp_path / "widgets")
    when = datetime(2026, 1, 28, 3, tzinfo=UTC)
    sha = repo.commit("docs: fix a typo", {"README.md": "hi\n"}, when=when)
    services = await make_services(default_repo=str(repo.path), default_lang="en")
    source = services.source(str(repo.path))
    window = day_window(when.date(), "Asia/Shanghai")
    first = await services.builder.build(source, window, "en")
    assert first.entries[0].importance is Importance.LOW and first.entries[0].corrected_from is None
    await services.corrections.record(source.name, sha, "medium", "ana", at=datetime.now(UTC))
    second = await services.builder.build(source, window, "en")  # from the digest cache
    assert (second.entries[0].importance, second.entries[0].corrected_by) == (Importance.MEDIUM, "ana")
    # the cache keeps what the analyses made: a correction never freezes into it
    keys = [k async for k in services.store.r.scan_iter(match=services.store.k("digest", "*"))]
    cached = [await services.store.get_json(k) for k in keys]
    digests = [c for c in cached if isinstance(c, dict) and c.get("entries")]
    assert digests and all(not e.get("corrected_by") for c in digests for e in c["entries"])


async def test_the_learned_profile_is_given_the_corrections(make_services):
    services = await make_services(learn_from_release_notes=True)
    assert services.builder.taste.corrections is services.corrections  # labelled examples for later weeks


def test_a_model_s_headline_is_put_aside_while_a_correction_shows_and_comes_back_after():
    """The model's bullets were written for the analysis's levels: while a correction shows, the
    headline is drawn by rule from the corrected levels (and says so); without one, the model's."""
    from dataclasses import replace

    d = replace(day(3), headline=("The model leads with the export change.",), headline_origin="llm")
    high = d.entries[0]
    corrected = overlay(d, {high.commit.sha: fix(high.commit.sha, "low")})
    shown = render_text(DigestParent(corrected))
    assert "The model leads" not in shown and "Headlines (rule-based)" in shown
    assert f"• {d.entries[1].commit.title}: {d.entries[1].analysis.importance_reason}" in shown
    assert high.commit.title not in shown.split("Headlines")[1].split("Main risks")[0]
    again = digest_from_dict(to_dict(corrected))  # as kept with a posted message
    back = overlay(again, {})
    assert back.headline == d.headline and back.headline_origin == "llm" and back.uncorrected_headline == ()
    assert "The model leads with the export change." in render_text(DigestParent(back))
    data = json.loads(render_json([corrected]))["digests"][0]
    assert data["headline_origin"] == "corrected" and data["uncorrected_headline"] == list(d.headline)
    entry = data["entries"][0]
    assert entry["analysis"]["importance_reason"].startswith("Corrected to low by a reader; the bot had said high: ")
    assert entry["corrected_reason"] == high.analysis.importance_reason
    assert "uncorrected_headline" not in json.loads(render_json([d]))["digests"][0]
