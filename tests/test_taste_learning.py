"""Learning a repository's profile off every reader's path (issue 33 §6): the clock learns each
day's right after midnight UTC; a digest asking for a day not learnt yet is judged by the newest
profile learnt as of an earlier day while its own is learnt in the background; each day's
learning starts from the day before's and gives the profile a full learn gives; and a process
that only reads profiles never imports scikit-learn. All on a real Redis, through the real CLI
where a process is what is tested."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import Importance, Subscription
from bot.core.window import day_window
from bot.sources.localgit import LocalGitSource
from bot.taste.learn import epoch
from tests import taste_repo

ROOT = Path(__file__).resolve().parent.parent
DAY = date(2026, 3, 18)  # as in test_taste.py: six releases published before it
PANEL = "[panels] Rework the tags panel (#9201)"
PANEL2 = "[panels] Rework the filters panel (#9202)"


def start_of(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), UTC)


@pytest.fixture
def relabelled_repo(tmp_path):
    """Seven weeks of releases; on DAY − 1 a release calls every panel rewrite breaking, and on
    DAY another panel rewrite lands: judged by DAY − 1's profile it is low (never listed), by
    DAY's it is high (the release counts from DAY on)."""
    repo = taste_repo.build(tmp_path / "repo", weeks=7)
    taste_repo.release_everything_as_breaking(repo, start_of(DAY) - timedelta(hours=10))
    repo.commit(
        PANEL, {"src/panels/tags_9201.py": taste_repo.source_lines(150, "t")}, when=start_of(DAY) + timedelta(hours=6)
    )
    repo.commit(
        PANEL2,
        {"src/panels/filters_9202.py": taste_repo.source_lines(150, "f")},
        when=start_of(DAY) + timedelta(hours=20),
    )
    return repo


# DAY in Tokyo (UTC+9) holds PANEL (06:00 UTC) but not PANEL2 (20:00 UTC): both are of UTC day DAY,
# judged by DAY's profile — a digest of Tokyo's DAY analyses the first only.
EARLY = day_window(DAY, "Asia/Tokyo")


def levels(digest) -> dict[str, Importance]:
    return {e.commit.title: e.analysis.importance for e in digest.entries}


async def test_a_day_not_learnt_yet_is_judged_by_the_newest_earlier_profile(make_services, relabelled_repo):
    services = await make_services()
    taste = services.builder.taste
    source = LocalGitSource(str(relabelled_repo.path))
    yesterday = epoch(start_of(DAY) - timedelta(days=1))
    await taste.learn(source, yesterday)  # the clock learnt yesterday's; today's is not learnt yet

    digest = await services.builder.build(source, EARLY, "en")
    # Judged by yesterday's profile, which has never seen the panels listed: no learning waited for.
    assert levels(digest)[PANEL] is Importance.LOW and PANEL2 not in levels(digest)
    # Today's was learnt meanwhile, in the background: what is analysed from now on is judged by
    # it (PANEL2), while what was shown keeps what it was shown with (one commit, one level).
    await taste.settle()
    again = await services.builder.build(source, day_window(DAY, "UTC"), "zh")
    assert levels(again)[PANEL] is Importance.LOW
    assert levels(again)[PANEL2] is Importance.HIGH


async def test_a_repository_never_learnt_gets_the_rules_at_once_and_its_profile_next(make_services, relabelled_repo):
    services = await make_services()
    source = LocalGitSource(str(relabelled_repo.path))
    first = await services.builder.build(source, EARLY, "en")
    assert "release notes" not in next(e for e in first.entries if e.commit.title == PANEL).analysis.importance_reason
    await services.builder.taste.settle()
    later = await services.builder.build(source, day_window(DAY, "UTC"), "zh")
    assert levels(later)[PANEL] is levels(first)[PANEL]  # as it was shown
    assert levels(later)[PANEL2] is Importance.HIGH


async def test_a_first_digests_profile_is_learnt_after_the_digest_not_while_it_is_built(make_services, relabelled_repo):
    """Learning competed for the interpreter with the digest that asked for the profile (a first
    digest took 1.5× its ideal): it waits until the digests being built here are done."""
    from tests.fakes.openai_server import FakeOpenAI, default_responder

    answering = threading.Event()
    asked = threading.Event()

    def held(request: dict):
        asked.set()
        answering.wait(30)  # the digest is in the middle of its analyses until the test lets go
        return default_responder(request)

    with FakeOpenAI(responder=held) as llm:
        services = await make_services(openai_base_url=llm.url, openai_api_key="sk-test-learning")
        source = LocalGitSource(str(relabelled_repo.path))
        taste = services.builder.taste
        building = asyncio.ensure_future(services.builder.build(source, EARLY, "en"))
        try:
            assert await asyncio.to_thread(asked.wait, 10), "the digest never asked the LLM"
            learning = asyncio.ensure_future(taste.settle())
            # Before: the profile was learnt meanwhile (well within 3 s of a 7-week repository).
            done, _ = await asyncio.wait([learning], timeout=3)
            assert not done, "the profile was learnt while the digest was being built"
            assert (await taste.day(source, start_of(DAY) + timedelta(hours=6))).as_of is None
        finally:
            answering.set()
        await building
        await learning  # and once the digest is done, it is learnt
    profile = await taste.day(source, start_of(DAY) + timedelta(hours=6))
    assert profile.as_of == start_of(DAY) and profile.verdict.usable


async def test_the_clock_learns_each_days_profile_after_midnight(make_services, relabelled_repo):
    from bot.runtime.app import App

    clock_now = start_of(DAY) + timedelta(minutes=5)  # five past midnight UTC
    services = await make_services(clock=lambda: clock_now)
    app = App.build(services)
    await app.subs.upsert(Subscription("console", "C1", str(relabelled_repo.path), at="09:00", tz="UTC", lang="en"))
    await app.make_clock(now=lambda: clock_now).tick()
    await services.builder.taste.settle()
    # The day's first digest finds its own profile: nothing to learn, nothing judged by yesterday's.
    source = services.source(str(relabelled_repo.path))
    profile = await services.builder.taste.day(source, start_of(DAY) + timedelta(hours=6))
    assert profile.as_of == start_of(DAY) and profile.verdict.usable
    digest = await services.builder.build(source, day_window(DAY, "UTC"), "en")
    assert levels(digest)[PANEL] is Importance.HIGH


async def test_learning_from_the_day_before_gives_the_profile_a_full_learn_gives(make_services, relabelled_repo):
    """Day DAY learnt from DAY − 1's state (the history read then, the notes parsed then) is the
    profile a fresh book learns from scratch — while it reads only the commits gained since."""
    source = LocalGitSource(str(relabelled_repo.path))
    incremental = (await make_services(redis_prefix="t-inc:")).builder.taste
    full = (await make_services(redis_prefix="t-full:")).builder.taste
    await incremental.learn(source, epoch(start_of(DAY) - timedelta(days=1)))

    read: list[int] = []
    real_history_of = LocalGitSource.history_of

    async def history_of(self, shas):
        read.append(len(shas))
        return await real_history_of(self, shas)

    LocalGitSource.history_of = history_of  # type: ignore[method-assign]
    try:
        stepped = await incremental.learn(source, epoch(start_of(DAY)))
    finally:
        LocalGitSource.history_of = real_history_of  # type: ignore[method-assign]
    whole = await full.learn(source, epoch(start_of(DAY)))
    before = await source.tip_before(start_of(DAY - timedelta(days=1)))
    after = await source.tip_before(start_of(DAY))
    gained = relabelled_repo.git("rev-list", "--no-merges", f"{before}..{after}").split()
    assert read == [len(gained)] and 0 < len(gained) < 40  # what the branch gained that day, not 2,000
    assert stepped.fingerprint == whole.fingerprint and stepped.verdict == whole.verdict
    store = incremental.store
    stepped_raw = store.decode_blob(await store.get_raw(incremental._key(source, epoch(start_of(DAY)))))
    whole_raw = full.store.decode_blob(await full.store.get_raw(full._key(source, epoch(start_of(DAY)))))
    assert stepped_raw == whole_raw  # the weights too, bit for bit


def test_a_process_that_reads_a_learnt_profile_never_imports_scikit_learn(run, relabelled_repo):
    """The CLI's first digest of the day is judged by the rules (nothing learnt yet) and learns the
    day's profile before it exits; the next process judges by that profile with numpy alone."""
    args = ("digest", "--repo", str(relabelled_repo.path), "--date", DAY.isoformat(), "--format", "json")
    first = run(*args, "--tz", "Asia/Tokyo", "--lang", "en")  # PANEL, not PANEL2 (see EARLY)
    assert first.returncode == 0, first.stderr
    level, reason = panel(first.stdout)
    assert (level, "release notes" in reason) == ("medium", False)  # the rules alone: a big rewrite
    second = run(*args, "--tz", "UTC", "--lang", "zh", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert second.returncode == 0, second.stderr[-2000:]
    assert panel(second.stdout)[0] == "medium"  # as the first run showed it
    assert panel(second.stdout, PANEL2)[0] == "high"  # judged by the day's profile, learnt by the first run
    modules = {
        line.rsplit("|", 1)[-1].strip() for line in second.stderr.splitlines() if line.startswith("import time:")
    }
    assert "bot.taste.judge" in modules
    assert not {m for m in modules if m.split(".")[0] == "sklearn"}


def panel(stdout: str, title: str = PANEL) -> tuple[str, str]:
    digest = json.loads(stdout)["digests"][0]
    entry = next(e for e in digest["entries"] if e["commit"]["title"] == title)
    return entry["analysis"]["importance"], entry["analysis"]["importance_reason"]


async def test_the_weights_judge_as_scikit_learn_does_bit_for_bit(relabelled_repo):
    """Readers judge with judge.Judge (numpy), learners fit with scikit-learn: every commit of the
    history gets the same numbers from both, for both models the levels can be learnt with."""
    from bot.taste.book import label_as_of
    from bot.taste.judge import Judge
    from bot.taste.model import LearnedProfile

    source = LocalGitSource(str(relabelled_repo.path))
    examples, verdict = await label_as_of(source, epoch(start_of(DAY)))
    assert verdict.usable
    history = await source.history(await source.tip_before(start_of(DAY + timedelta(days=7))), 400)
    for kind in ("logistic", "naive_bayes"):
        fitted = LearnedProfile(examples, kind)
        judge = Judge(json.loads(json.dumps(fitted.weights())))  # as kept in Redis
        for c in history:
            assert judge.judge(c.title, c.paths, c.added) == fitted.judge(c.title, c.paths, c.added), (kind, c.title)
