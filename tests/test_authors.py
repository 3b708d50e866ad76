"""Author filters (`authors NAME…`, `exclude-authors NAME…`): who matches, the grammar and its bad
input in both languages, the subscription and its seed file, the one subscription → delivery
mapping, the digest's header, the cache, and the login each source reads. End to end through
Slack, the clock and the CLI: tests/test_noise_e2e.py."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from bot.conversation.commands import CommandError, parse_command
from bot.conversation.commands.digest import DigestArgs
from bot.conversation.commands.filters import FilterArgs
from bot.conversation.commands.subscribe import SubscribeArgs
from bot.conversation.commands.week import WeekArgs
from bot.core.models import Subscription, digest_from_dict, subscription_from_dict, to_dict
from bot.core.window import day_window
from bot.delivery.spec import DeliverySpec, delivery_spec
from bot.digest.authorfilter import MAX_AUTHORS, AuthorFilter
from bot.i18n import localize
from bot.render import labels as L
from bot.sources.message import email_user

# --- who matches ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,author,login,hit",
    [
        ("dependabot[bot]", "dependabot[bot]", "dependabot[bot]", True),
        ("Dependabot", "dependabot[bot]", "", True),  # any case, [bot] may be left off
        ("renovate", "renovate[bot]", "renovate[bot]", True),
        ("Grace Hopper", "Grace Hopper", "grace", True),
        ("grace hopper", "Grace  Hopper", "", True),
        ("grace", "Grace Hopper", "grace", True),  # the login
        ("@octocat", "The Octocat", "octocat", True),  # typed as a mention
        ("grace", "Grace Hopper", "", False),  # a part of the name is not the name
        ("ada", "Grace Hopper", "grace", False),
        ("", "", "", False),
    ],
)
def test_a_name_matches_the_authors_name_or_login_in_any_case(name, author, login, hit):
    assert AuthorFilter(authors=(name,)).keeps(author, login) is hit
    assert AuthorFilter(exclude=(name,)).keeps(author, login) is not hit


def test_authors_keeps_only_theirs_exclude_drops_theirs_and_both_combine():
    both = AuthorFilter.of(["ada", "grace"], ["Grace Hopper"])
    assert both.keeps("Ada Lovelace", "ada") and not both.keeps("Grace Hopper", "grace")
    assert not both.keeps("renovate[bot]", "renovate[bot]")
    assert not AuthorFilter() and AuthorFilter().keeps("anyone") and AuthorFilter().key() == ""
    assert AuthorFilter.of(["b", "a"]).key() == AuthorFilter.of(["a", "b", "a"]).key()
    # names that keep the same commits are one cache entry, however they were typed
    assert AuthorFilter.of(["Ada"]).key() == AuthorFilter.of(["@ada"]).key() == AuthorFilter.of(["ADA"]).key()
    assert AuthorFilter.of([], ["dependabot"]).key() == AuthorFilter.of([], ["Dependabot[bot]"]).key()
    assert AuthorFilter.of(["ada"]).key() != AuthorFilter.of(["adam"]).key()
    keys = {AuthorFilter.of(["a"]).key(), AuthorFilter.of([], ["a"]).key(), AuthorFilter.of(["a,b"]).key()}
    assert len(keys) == 3 and "" not in keys  # authors a ≠ exclude-authors a ≠ one author named "a,b"


@pytest.mark.parametrize(
    "address,user",
    [
        ("ada@example.com", "ada"),
        ("49699333+dependabot[bot]@users.noreply.github.com", "dependabot[bot]"),
        ("<grace@example.com>", "grace"),
        ("", ""),
        (None, ""),
        ("not-an-address", ""),
    ],
)
def test_the_login_of_an_email_address_is_its_user_part(address, user):
    assert email_user(address) == user


# --- the grammar ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "2026-01-28 a/b authors dependabot[bot] renovate",
            DigestArgs("2026-01-28", ("a/b",), FilterArgs(authors=("dependabot[bot]", "renovate"))),
        ),
        (
            'digest exclude-authors dependabot[bot] "Grace Hopper" @ada paths src/**',
            DigestArgs(
                None, (), FilterArgs(paths=("src/**",), exclude_authors=("dependabot[bot]", "Grace Hopper", "ada"))
            ),
        ),
        ("digest authors “Grace Hopper” `ada`", DigestArgs(None, (), FilterArgs(authors=("Grace Hopper", "ada")))),
        ("digest authors ada Ada ADA", DigestArgs(None, (), FilterArgs(authors=("ada", "Ada", "ADA")))),
        ("authors ada", DigestArgs(None, (), FilterArgs(authors=("ada",)))),  # the verb and date are optional
        (
            "paths src/** exclude-authors renovate",
            DigestArgs(None, (), FilterArgs(paths=("src/**",), exclude_authors=("renovate",))),
        ),
        ("week 2026-01-19 authors ada", WeekArgs("2026-01-19", (), FilterArgs(authors=("ada",)))),
        (
            "subscribe a/b authors ada at 09:00 exclude-authors renovate bots show",
            SubscribeArgs("a/b", at="09:00", bots="show", authors=("ada",), exclude_authors=("renovate",)),
        ),
        ("subscribe a/b authors none exclude-authors NONE", SubscribeArgs("a/b", authors=(), exclude_authors=())),
    ],
)
def test_grammar(text, expected):
    assert parse_command(text).args == expected


@pytest.mark.parametrize(
    "text,en,zh,command",
    [
        (
            "2026-01-28 a/b authors",
            "'authors' needs at least one author's name or login, e.g. authors dependabot[bot].",
            "“authors”至少需要一个作者名或登录名",
            "digest",
        ),
        ("week exclude-authors bots show", "'exclude-authors' needs at least one", "“exclude-authors”至少需要", "week"),
        (
            "digest authors " + "x" * 101,
            "is too long for an author's name or login (at most 100 characters).",
            "太长了（最多 100 个字符）",
            "digest",
        ),
        (
            "subscribe a/b authors " + " ".join(f"u{i}" for i in range(MAX_AUTHORS + 1)),
            f"'authors' takes at most {MAX_AUTHORS} names.",
            f"最多接受 {MAX_AUTHORS} 个名字",
            "subscribe",
        ),
        ("authors", "'authors' needs at least one author's name or login", "“authors”至少需要", "digest"),
        ('digest authors "Grace Hopper', "The quote in '\"Grace Hopper' is not closed", "引号没有闭合", "digest"),
        ('digest authors ""', "is an empty name.", "是空的名字", "digest"),
        ("digest authors <ada@example.com>", "not an e-mail address", "而不是邮箱地址", "digest"),
        ("subscribe a/b authors x authors y", "Option 'authors' is given twice.", "重复出现", "subscribe"),
    ],
)
def test_bad_input_is_one_sentence_in_the_readers_language(text, en, zh, command):
    with pytest.raises(CommandError) as err:
        parse_command(text)
    assert err.value.command == command
    said = localize(err.value, "en")
    assert en in said and "\n" not in said and "x" * 90 not in said  # a pasted page is not echoed whole
    assert zh in localize(err.value, "zh")


def test_usage_and_help_name_the_options():
    from bot.conversation.commands import help_text, usage

    for lang in ("en", "zh"):
        for command in ("digest", "week", "subscribe"):
            line = usage(lang, command)
            assert "[authors " in line and "[exclude-authors " in line, (lang, command)
        assert "exclude-authors" in help_text(lang)


# --- the subscription and the delivery -----------------------------------------------------------


def test_a_subscription_keeps_its_authors_and_old_ones_still_read():
    sub = Subscription("slack", "C1", "a/b", authors=("Grace Hopper",), exclude_authors=("renovate",))
    assert subscription_from_dict(to_dict(sub)) == sub
    old = {k: v for k, v in to_dict(sub).items() if k not in ("authors", "exclude_authors")}
    assert subscription_from_dict(old).authors == ()


def test_the_subscriptions_file_takes_authors(tmp_path, make_settings):
    from bot.channels.subscriptions import load_subscription_file
    from bot.core.models import UsageError

    good = tmp_path / "subs.toml"
    good.write_text(
        '[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "a/b"\n'
        'authors = ["Grace Hopper", "@ada"]\nexclude_authors = "dependabot[bot]"\n'
    )
    (sub,) = load_subscription_file(good, make_settings())
    assert (sub.authors, sub.exclude_authors) == (("Grace Hopper", "ada"), ("dependabot[bot]",))
    bad = tmp_path / "bad.toml"
    bad.write_text('[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "a/b"\nauthors = [1]\n')
    with pytest.raises(UsageError, match="subscription #1: authors must be a list of author names or logins"):
        load_subscription_file(bad, make_settings())


def test_typed_authors_win_over_the_subscriptions_and_the_spec_survives_the_queue():
    sub = Subscription("slack", "C1", "a/b", paths=("src/**",), authors=("ada",), exclude_authors=("bot",))
    window = day_window(date(2026, 1, 28), "UTC")
    spec = delivery_spec(sub, platform="slack", channel="C1", repo="a/b", window=window, key="k", lang="en")
    assert (spec.authors, spec.exclude_authors, spec.paths) == (("ada",), ("bot",), ("src/**",))
    typed = delivery_spec(
        sub, platform="slack", channel="C1", repo="a/b", window=window, key="k", lang="en", authors=("grace",)
    )
    assert typed.author_filter() == AuthorFilter(("grace",), ("bot",))  # what was not typed: the subscription's
    cleared = delivery_spec(
        sub, platform="slack", channel="C1", repo="a/b", window=window, key="k", lang="en", exclude_authors=()
    )
    assert cleared.author_filter() == AuthorFilter(("ada",), ())
    import json

    assert DeliverySpec.from_dict(json.loads(json.dumps(to_dict(spec)))) == spec


# --- the digest ------------------------------------------------------------------------------------


def test_the_digest_says_its_author_filter_and_round_trips_it():
    from bot.core.models import Digest

    d = Digest(
        "acme/x",
        "main",
        day_window(date(2026, 1, 28), "UTC"),
        "en",
        (),
        paths=("a/**",),
        filtered_out=4,
        authors=("ada", "Grace Hopper"),
        exclude_authors=("renovate",),
    )
    again = digest_from_dict(to_dict(d))
    assert again == d
    assert (
        L.filter_line(again) == '🔎 paths a/** · authors ada "Grace Hopper" · exclude-authors renovate — 0 of 4 commits'
    )
    zh = L.filter_line(digest_from_dict({**to_dict(d), "lang": "zh", "paths": []}))
    assert zh == '🔎 作者 ada "Grace Hopper" · 排除作者 renovate — 4 个提交中的 0 个'


async def test_a_filtered_digest_is_another_cache_entry(make_settings, tmp_path):
    """The same finished day, built unfiltered, then by author, then unfiltered again: each its
    own cached digest (a shared key would hand the first one to the second asker)."""
    from bot.runtime.services import Services
    from tests.noise_repo import DAY, DAY_COMMITS, build_monorepo

    mono = build_monorepo(tmp_path / "mono")
    services = Services.build(make_settings(default_repo=str(mono.path), default_lang="en"))
    try:
        source = services.source(str(mono.path))
        window = day_window(DAY, "Asia/Shanghai")
        assert window.end + timedelta(days=1) <= services.builder.clock()  # finished: cached
        whole = await services.builder.build(source, window, "en")
        ada = await services.builder.build(source, window, "en", authors=AuthorFilter.of(["ada"]))
        not_ada = await services.builder.build(source, window, "en", authors=AuthorFilter.of([], ["ADA"]))
        again = await services.builder.build(source, window, "en")
        typed_otherwise = await services.builder.build(source, window, "en", authors=AuthorFilter.of(["@Ada"]))
    finally:
        await services.aclose()
    assert len(whole.entries) == len(again.entries) == DAY_COMMITS and again.authors == ()
    assert {e.commit.author for e in ada.entries} == {"Ada Lovelace"} and len(ada.entries) == 2
    assert (ada.authors, ada.filtered_out) == (("ada",), DAY_COMMITS - 2)
    assert len(not_ada.entries) == DAY_COMMITS - 2 and not_ada.exclude_authors == ("ADA",)
    assert all(e.commit.login == "ada" for e in ada.entries)  # the e-mail's user part, read by git
    assert typed_otherwise.generated_at == ada.generated_at  # `@Ada` is `ada`: the kept digest, not a rebuild


# --- the login each source reads --------------------------------------------------------------------


async def test_github_commits_carry_the_accounts_login_else_the_emails_user_part(fake_github, make_settings):
    from datetime import UTC, datetime

    from bot.sources.github import GitHubSource

    repo = "octo/widgets"
    fake_github.add_repo(repo)
    when = datetime(2026, 1, 28, 2, tzinfo=UTC)
    fake_github.add_commit(repo, "feat: one", committed_at=when, author="The Octocat", login="octocat")
    fake_github.add_commit(
        repo,
        "Bump x",
        committed_at=when + timedelta(minutes=1),
        author="dependabot[bot]",
        email="49699333+dependabot[bot]@users.noreply.github.com",
    )
    fake_github.add_commit(repo, "docs: two", committed_at=when + timedelta(minutes=2), email="grace@example.com")
    source = GitHubSource(repo, make_settings(github_api_url=fake_github.url))
    try:
        commits = await source.list_commits(day_window(date(2026, 1, 28), "UTC"))
    finally:
        source.close()
    assert [c.login for c in commits] == ["grace", "dependabot[bot]", "octocat"]
    assert fake_github.count(startswith="/users/") == 0  # read from the listing: no request per author
    assert fake_github.count(startswith=f"/repos/{repo}/commits/") == 0
