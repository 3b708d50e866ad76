"""Noise controls and the weekly roll-up, the pure parts: glob semantics, who is a dependency bot,
the bot line, the weekly schedule, the grammar of the new options and its errors in zh and en,
the roll-up's areas. (End to end through Slack, Feishu and the clock: test_noise_e2e.py.)"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.analysis.repo_config import parse_profile
from bot.conversation.commands import CommandError, parse_command
from bot.conversation.commands.digest import DigestArgs
from bot.conversation.commands.filters import FilterArgs
from bot.conversation.commands.subscribe import SubscribeArgs
from bot.conversation.commands.unsubscribe import UnsubscribeArgs
from bot.conversation.commands.week import WeekArgs
from bot.core.chat_platform import ROOT_AREA, BotGroup
from bot.core.models import (
    Analysis,
    ChangeType,
    Commit,
    Digest,
    DigestEntry,
    FileChange,
    Importance,
    Subscription,
    digest_from_dict,
    subscription_from_dict,
    to_dict,
)
from bot.core.window import day_window, week_window
from bot.digest.noise import collapse, collapsible, is_bot
from bot.digest.pathfilter import PathFilter
from bot.digest.rollup import area_for, rollup
from bot.i18n import localize
from bot.render import labels as L
from bot.runtime.schedule import due_week

UTC = UTC


# --- globs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "glob,path,hit",
    [
        ("crates/uv-resolver/**", "crates/uv-resolver/src/lib.rs", True),
        ("crates/uv-resolver/**", "crates/uv-resolver-x/src/lib.rs", False),
        ("crates/*/src/lib.rs", "crates/uv/src/lib.rs", True),
        ("crates/*/src/lib.rs", "crates/uv/sub/src/lib.rs", False),  # * stays inside one segment
        ("crates/**/lib.rs", "crates/uv/sub/src/lib.rs", True),  # ** crosses directories
        ("crates/**/lib.rs", "crates/lib.rs", True),  # …zero of them too
        ("**/*.md", "README.md", True),
        ("**/*.md", "docs/guide/intro.md", True),
        ("*.md", "docs/intro.md", False),
        ("crates/uv-resolver", "crates/uv-resolver/src/lib.rs", True),  # a plain directory: everything under it
        ("crates/uv-resolver", "crates/uv-resolver", True),
        ("crates/uv-resolver", "crates/uv-resolver2/x", False),
        ("docs/", "docs/a/b.md", True),
        ("src/mod_?.py", "src/mod_1.py", True),
        ("src/mod_?.py", "src/mod_10.py", False),
        ("src/[ab].py", "src/b.py", True),
        ("src/[!ab].py", "src/b.py", False),
        ("Src/**", "src/x.py", False),  # case-sensitive, like git paths
        ("./frontend/**", "frontend/app.ts", True),
    ],
)
def test_glob_semantics(glob, path, hit):
    assert PathFilter.of(paths=[glob]).keeps([path]) is hit


def test_paths_keep_a_commit_touching_any_match_and_exclude_drops_only_all_excluded():
    only_resolver = PathFilter.of(paths=["crates/uv-resolver/**"])
    assert only_resolver.keeps(["docs/a.md", "crates/uv-resolver/src/x.rs"])  # touches it: a resolver change
    assert not only_resolver.keeps(["docs/a.md"])
    assert not only_resolver.keeps([])  # an empty commit touches nothing
    no_docs = PathFilter.of(exclude=["docs/**", "**/*.md"])
    assert not no_docs.keeps(["docs/a.md", "README.md"])  # only docs: dropped
    assert no_docs.keeps(["docs/a.md", "src/x.py"])  # docs and code: not "just docs"
    assert no_docs.keeps([])
    both = PathFilter.of(paths=["backend/**"], exclude=["backend/tests/**"])
    assert both.keeps(["backend/api.py"]) and not both.keeps(["backend/tests/test_api.py"])
    assert not PathFilter() and PathFilter().keeps(["anything"]) and PathFilter().key() == ""
    assert PathFilter.of(["b/**", "a/**"]).key() == PathFilter.of(["a/**", "b/**"]).key()


def test_a_rename_counts_its_old_path_too():
    from bot.digest.pathfilter import touched_paths

    moved = [FileChange("backend/x.py", "renamed", previous_path="frontend/x.py")]
    assert PathFilter.of(paths=["frontend/**"]).keeps(touched_paths(moved))


# --- the grammar ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "2026-01-19 astral-sh/uv paths crates/uv-resolver/**",
            DigestArgs("2026-01-19", ("astral-sh/uv",), FilterArgs(("crates/uv-resolver/**",))),
        ),
        (
            "digest yesterday a/b exclude docs/** **/*.md bots show",
            DigestArgs("yesterday", ("a/b",), FilterArgs(None, ("docs/**", "**/*.md"), "show")),
        ),
        ("digest paths `crates/x/**` a/b", DigestArgs(None, (), FilterArgs(("crates/x/**", "a/b")))),  # globs run on
        ("week", WeekArgs(None, ())),
        (
            "week 2026-01-19 astral-sh/uv paths crates/**",
            WeekArgs("2026-01-19", ("astral-sh/uv",), FilterArgs(("crates/**",))),
        ),
        ("周报 上周", WeekArgs("上周", ())),
        ("subscribe a/b weekly mon 09:30", SubscribeArgs("a/b", at="09:30", weekly=True, weekday="mon")),
        (
            "subscribe a/b weekly friday at 18:00 tz UTC",
            SubscribeArgs("a/b", at="18:00", tz="UTC", weekly=True, weekday="fri"),
        ),
        ("订阅 a/b 每周 周五", SubscribeArgs("a/b", weekly=True, weekday="fri")),
        ("subscribe a/b weekly", SubscribeArgs("a/b", weekly=True)),
        (
            "subscribe a/b paths frontend/** at 09:00 bots show",
            SubscribeArgs("a/b", at="09:00", paths=("frontend/**",), bots="show"),
        ),
        ("subscribe a/b paths none exclude none", SubscribeArgs("a/b", paths=(), exclude=())),
        ("subscribe a/b branch daily", SubscribeArgs("a/b", branch="daily")),  # an option's value, not the word
        ("unsubscribe a/b weekly", UnsubscribeArgs("a/b", "weekly")),
        ("unsubscribe a/b", UnsubscribeArgs("a/b")),
    ],
)
def test_grammar(text, expected):
    assert parse_command(text).args == expected


@pytest.mark.parametrize(
    "text,en,zh,command",
    [
        (
            "2026-01-19 a/b paths",
            "'paths' needs at least one glob, e.g. paths crates/uv-resolver/**.",
            "“paths”至少需要一个 glob",
            "digest",
        ),
        (
            "2026-01-19 a/b paths /crates/**",
            "'/crates/**' starts with /, but globs are relative to the repository root",
            "“/crates/**”以 / 开头",
            "digest",
        ),
        ("week a/b exclude ../secrets/**", "'../secrets/**' climbs out of the repository", "用“..”跳出了仓库", "week"),
        ("subscribe a/b paths src/[ab.py", "'src/[ab.py' has an unclosed or empty [ ] in it.", "没有闭合", "subscribe"),
        (
            "subscribe a/b bots sometimes",
            "bots must be collapse or show, not 'sometimes'.",
            "bots 只能是 collapse 或 show",
            "subscribe",
        ),
        ("subscribe a/b paths x/** paths y/**", "Option 'paths' is given twice.", "重复出现", "subscribe"),
        ("subscribe a/b weekly funday", "'funday' is not a day of the week", "“funday”不是星期几", "subscribe"),
        ("subscribe a/b weekly mon 09:30 at 10:00", "Option 'at' is given twice.", "重复出现", "subscribe"),
        ("subscribe a/b weekly daily", "Give either 'weekly' or 'daily', not both.", "只能选一个", "subscribe"),
        (
            "week 2026-01-19..2026-01-25",
            "'week' takes one day (the ISO week holding it), not the range",
            "week 只接受一个日期",
            "week",
        ),
        ("week 2026-01-19 2026-01-26", "Two dates given", "给了两个日期", "week"),
        (
            "unsubscribe a/b monthly",
            "unsubscribe must be daily or weekly, not 'monthly'.",
            "只能是 daily 或 weekly",
            "unsubscribe",
        ),
    ],
)
def test_bad_input_is_one_sentence_in_the_readers_language(text, en, zh, command):
    with pytest.raises(CommandError) as err:
        parse_command(text)
    assert err.value.command == command
    assert en in localize(err.value, "en") and "\n" not in localize(err.value, "en")
    assert zh in localize(err.value, "zh")


def test_subscriptions_keep_their_new_fields_and_old_ones_still_read():
    sub = Subscription("slack", "C1", "a/b", paths=("frontend/**",), exclude=("**/*.md",), bots="show", weekday="mon")
    assert subscription_from_dict(to_dict(sub)) == sub
    assert sub.key.endswith(":weekly") and Subscription("slack", "C1", "a/b").key == "slack:C1:a/b"
    old = {
        "platform": "slack",
        "channel": "C1",
        "repo": "a/b",
        "at": "09:00",
        "tz": "UTC",
        "lang": "en",
        "min_importance": "low",
        "branch": None,
        "post_empty": True,
    }  # stored before this change
    assert subscription_from_dict(old) == Subscription("slack", "C1", "a/b", tz="UTC", lang="en")


def test_the_subscriptions_file_takes_the_new_keys(tmp_path, make_settings):
    from bot.channels.subscriptions import load_subscription_file
    from bot.core.models import UsageError

    good = tmp_path / "subs.toml"
    good.write_text(
        '[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "a/b"\nweekly = "fri"\n'
        'paths = ["frontend/**"]\nexclude = "**/*.md"\nbots = "show"\n'
    )
    (sub,) = load_subscription_file(good, make_settings())
    assert (sub.weekday, sub.paths, sub.exclude, sub.bots) == ("fri", ("frontend/**",), ("**/*.md",), "show")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "a/b"\npaths = ["/abs/**"]\n')
    with pytest.raises(UsageError, match="subscription #1: paths: '/abs/\\*\\*' is not a usable glob"):
        load_subscription_file(bad, make_settings())


# --- bots ------------------------------------------------------------------------------------------


def entry(
    author: str,
    importance: Importance,
    ctype: ChangeType = ChangeType.DEPENDENCIES,
    *,
    title: str = "t",
    when: datetime | None = None,
    updates: tuple[str, ...] = (),
    sha: str = "a" * 40,
) -> DigestEntry:
    commit = Commit("acme/x", sha, title, "", author, when or datetime(2026, 1, 28, 3, tzinfo=UTC))
    return DigestEntry(commit, Analysis(ctype, importance, "why", "what"), updates=updates)


@pytest.mark.parametrize(
    "author,bot",
    [
        ("renovate[bot]", True),
        ("dependabot[bot]", True),
        ("pre-commit-ci[bot]", True),
        ("Renovate", True),
        ("DEPENDABOT", True),
        ("github-actions[bot]", True),
        ("Ada Lovelace", False),
        ("robot", False),
    ],
)
def test_who_is_a_bot(author, bot):
    assert is_bot(author) is bot


@pytest.mark.parametrize(
    "e,folded",
    [
        (entry("renovate[bot]", Importance.LOW), True),
        (entry("renovate[bot]", Importance.MEDIUM), True),
        (entry("renovate[bot]", Importance.HIGH), False),  # a major bump with a breaking note stays news
        (entry("pre-commit-ci[bot]", Importance.LOW, ChangeType.CI_BUILD), True),
        (entry("automation-bot[bot]", Importance.LOW, ChangeType.BUGFIX), False),  # a bot that writes code
        (entry("automation-bot[bot]", Importance.LOW, ChangeType.DEPENDENCIES), True),
        (entry("Ada Lovelace", Importance.LOW), False),
    ],
)
def test_which_commits_collapse(e, folded):
    assert collapsible(e) is folded


def test_a_bot_line_names_three_updates_oldest_first_then_an_ellipsis():
    t0 = datetime(2026, 1, 28, 2, tzinfo=UTC)
    es = [
        entry("renovate[bot]", Importance.LOW, when=t0 + timedelta(minutes=i), updates=(u,), sha=f"{i:040d}")
        for i, u in enumerate(["clap 4.5.53 → 4.5.54", "tokio 1.48 → 1.49", "serde 1.0.1 → 1.0.2", "url 2.0 → 2.1"])
    ]
    kept, groups = collapse(list(reversed(es)) + [entry("Ada", Importance.LOW)])
    assert [e.commit.author for e in kept] == ["Ada"] and [g.author for g in groups] == ["renovate[bot]"]
    assert L.bot_line("en", groups[0]) == (
        "🤖 renovate[bot]: 4 updates — clap 4.5.53 → 4.5.54, tokio 1.48 → 1.49, serde 1.0.1 → 1.0.2, …"
    )
    assert L.bot_line("zh", BotGroup("renovate[bot]", (es[0],))) == "🤖 renovate[bot]：1 个更新 — clap 4.5.53 → 4.5.54"
    untitled = entry("dependabot[bot]", Importance.LOW, title="Bump the npm group")
    assert L.bot_line("en", BotGroup("dependabot[bot]", (untitled,))).endswith("— Bump the npm group")
    assert collapse(es, "show") == (es, [])


def test_a_digest_round_trips_its_filter_and_updates():
    d = Digest(
        "acme/x",
        "main",
        day_window(date(2026, 1, 28), "UTC"),
        "en",
        (entry("renovate[bot]", Importance.LOW, updates=("clap 1 → 2",)),),
        paths=("a/**",),
        exclude=("b/**",),
        filtered_out=3,
    )
    again = digest_from_dict(to_dict(d))
    assert again == d and L.filter_line(again) == "🔎 paths a/** · exclude b/** — 1 of 4 commits"
    assert L.filter_line(digest_from_dict({**to_dict(d), "paths": [], "exclude": []})) == ""


# --- the weekly schedule -----------------------------------------------------------------------------


def weekly(at="09:30", day="mon", tz="Asia/Shanghai"):
    return Subscription("slack", "C1", "acme/x", at=at, tz=tz, weekday=day)


@pytest.mark.parametrize(
    "sub,now,expected",
    [
        # Monday 2026-02-02 09:30 in Shanghai is 01:30 UTC: last week's roll-up (Monday 01-26)
        (weekly(), datetime(2026, 2, 2, 1, 29, tzinfo=UTC), None),
        (weekly(), datetime(2026, 2, 2, 1, 30, tzinfo=UTC), date(2026, 1, 26)),
        (weekly(), datetime(2026, 2, 2, 4, 30, tzinfo=UTC), date(2026, 1, 26)),  # the end of catch-up
        (weekly(), datetime(2026, 2, 2, 4, 31, tzinfo=UTC), None),  # too late: not posted at noon
        (weekly(), datetime(2026, 2, 4, 1, 30, tzinfo=UTC), None),  # Wednesday: nothing due
        # Friday 18:00 in New York still posts the previous ISO week, not the one running
        (weekly("18:00", "fri", "America/New_York"), datetime(2026, 1, 30, 23, 0, tzinfo=UTC), date(2026, 1, 19)),
        # Sunday 23:30 in Tokyo, caught up at 00:10 on Monday: the week before that Sunday's
        (weekly("23:30", "sun", "Asia/Tokyo"), datetime(2026, 2, 1, 15, 10, tzinfo=UTC), date(2026, 1, 19)),
    ],
)
def test_due_week(sub, now, expected):
    assert due_week(now, sub, timedelta(minutes=180)) == expected


def test_week_windows_run_monday_to_sunday_and_stop_today():
    w = week_window(date(2026, 1, 28), "Asia/Shanghai")
    assert w.label == "2026-01-26..2026-02-01"
    assert (w.end - w.start) == timedelta(days=7)
    running = week_window(date(2026, 1, 28), "UTC", today=date(2026, 1, 28))
    assert running.label == "2026-01-26..2026-01-28"


# --- the roll-up -------------------------------------------------------------------------------------


def test_areas_are_top_directories_or_the_profiles():
    f = lambda p, n=10: FileChange(p, "modified", n, 0)  # noqa: E731
    assert area_for([f("crates/uv-resolver/src/lib.rs", 50), f("docs/x.md", 5)]) == "crates/uv-resolver"
    assert area_for([f("docs/guide/x.md")]) == "docs/guide" and area_for([f("docs/x.md")]) == "docs"
    assert area_for([f("Cargo.toml")]) == ROOT_AREA and area_for([]) == ""
    profile = parse_profile('[areas]\nresolver = ["crates/uv-resolver/", "crates/uv-pubgrub/"]\n')
    assert area_for([f("crates/uv-pubgrub/src/a.rs")], profile) == "resolver"
    assert area_for([f("crates/uv-cli/src/a.rs")], profile) == "crates/uv-cli"
    assert profile.fingerprint() == parse_profile('[areas]\nx = ["y/"]\n').fingerprint()  # areas change no analysis


def test_a_rollup_groups_by_area_never_lists_lows_and_folds_bots():
    t0 = datetime(2026, 1, 26, 2, tzinfo=UTC)
    es = (
        entry("Ada", Importance.MEDIUM, ChangeType.FEATURE, title="m1", when=t0, sha="1" * 40),
        entry("Ada", Importance.HIGH, ChangeType.FEATURE, title="h1", when=t0 + timedelta(days=2), sha="2" * 40),
        entry("Ada", Importance.MEDIUM, ChangeType.FEATURE, title="m2", when=t0 + timedelta(days=1), sha="3" * 40),
        entry("Ada", Importance.LOW, ChangeType.DOCS, title="l1", sha="4" * 40),
        entry("renovate[bot]", Importance.LOW, sha="5" * 40, updates=("clap 1 → 2",)),
    )
    d = Digest("acme/x", "main", week_window(date(2026, 1, 26), "UTC"), "en", es)
    r = rollup(d, {"1" * 40: "backend", "2" * 40: "frontend", "3" * 40: "backend"})
    assert [(a, [e.commit.title for e in entries]) for a, entries in r.areas] == [
        ("frontend", ["h1"]),
        ("backend", ["m1", "m2"]),
    ]
    assert r.low == 1 and [g.author for g in r.bots] == ["renovate[bot]"]
    assert rollup(d, {}, min_importance="high").areas[0][1][0].commit.title == "h1"
    assert rollup(d, {}, min_importance="high").low == 0 and not rollup(d, {}, min_importance="high").bots
    assert L.day_of(d, es[1].commit) == "Wed 01-28" and L.day_of(replace_lang(d, "zh"), es[1].commit) == "周三 01-28"


def replace_lang(d: Digest, lang: str) -> Digest:
    from dataclasses import replace

    return replace(d, lang=lang)


def test_a_bots_medium_update_is_named_first_and_counted():
    t0 = datetime(2026, 1, 28, 2, tzinfo=UTC)
    es = [
        entry(
            "renovate[bot]",
            Importance.LOW,
            when=t0 + timedelta(minutes=i),
            updates=(f"crate{i} 1.0.{i} → 1.0.{i + 1}",),
            sha=f"{i:040d}",
        )
        for i in range(4)
    ]
    es.append(
        entry(
            "renovate[bot]",
            Importance.MEDIUM,
            when=t0 + timedelta(hours=1),
            updates=("syn 2.0.1 → 3.0.0",),
            sha="9" * 40,
        )
    )
    (group,) = collapse(es)[1]
    assert L.bot_line("en", group) == (
        "🤖 renovate[bot]: 5 updates (🟡 1 of medium importance) — syn 2.0.1 → 3.0.0, "
        "crate0 1.0.0 → 1.0.1, crate1 1.0.1 → 1.0.2, …"
    )
    assert "（🟡 中重要度 1 个）" in L.bot_line("zh", group)
