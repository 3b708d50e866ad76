"""The report page, as its readers and its attackers meet it: a digest's parent message on Slack,
Feishu and the terminal links its full report when PUBLIC_BASE_URL is set (and only then);
the link, fetched from the running web app, is the whole report in the digest's language; a
link that was changed in any way, or has expired, and every listing URL are refused with a
page that names nothing; hostile commit text stays text. Real Redis, real aiohttp server,
the real Slack/Feishu SDKs against their loopback fakes. (The browser checks are in
test_report_browser.py.)"""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import pytest

from bot.report import signing
from bot.report.page import prose, render_page
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from handlers.web import bound_port, build_app, report_routes, start_server
from tests.gitrepo import GitRepo
from tests.reportdata import day
from tests.shared.report_page import PUBLIC, Page, local

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = '<img src=x onerror="window.__pwned=1">'
LINK = re.compile(r"https://digest\.example\.com/r/[A-Za-z0-9_-]+\?exp=\d+(?:&amp;|&)sig=[A-Za-z0-9_-]+")


# --- reading a page as a reader does --------------------------------------------------------------


def tamper(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    path = parts.path
    if "id" in changes:
        path = "/r/" + changes.pop("id")
    query.update(changes)
    query = {k: v for k, v in query.items() if v is not None}
    return f"{parts.scheme}://{parts.netloc}{path}?{urlencode(query)}"


@pytest.fixture
async def web(make_services):
    """A web process serving report pages, and its Services (Redis, settings, Reports)."""
    services = await make_services(public_base_url=PUBLIC)
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(runner)}"
    async with aiohttp.ClientSession() as http:

        async def get(url: str, **headers) -> tuple[int, str, dict]:
            headers = {"Accept-Language": "en", **headers}  # a refusal speaks the visitor's language
            async with http.get(url, headers=headers, allow_redirects=False) as resp:
                return resp.status, await resp.text(), dict(resp.headers)

        yield services, base, get
    await runner.cleanup()


# --- the page: the Markdown report's content, in HTML ---------------------------------------------


def test_the_page_holds_the_whole_report_and_every_toc_link_lands():
    d = day(12, notices=("⚠️ The LLM could not analyse 2 commits; they show the rule-based analysis.",))
    page = Page(render_page(d, expires=int(time.time()) + 3600))
    text = page.text
    for words in (
        "Daily update report (2026-01-28)",
        "acme/widgets",
        "📌 Headlines",
        "The export API changed",
        "🗂 Commits",
        "Committed",
        "Author",
        "📊 Stats",
        "12 commits on 2026-01-28 | 🔴 high 3 | 🟡 medium 5 | 🟢 low 4",
        "📋 Contents",
        "🔴 High importance (3)",
        "🟡 Medium importance (5)",
        "🟢 Low importance (4)",
        "🎯 Change type",
        "⚡ Importance",
        "📋 Summary",
        "🧭 Impact",
        "🔍 Technical insight",
        "⚠️ Risks",
        "💡 Recommendations",
        "📁 Coverage: 3/4 files analysed",
        "vendor/lib.min.js",
        "⚠️ The LLM could not analyse 2 commits",
        "This link works until",
    ):
        assert words in text, words
    for e in d.entries:
        assert text.count(e.commit.title + " ") == 3, e.commit.title  # in the table, the contents, its section
        assert e.commit.short_sha in text
    assert text.index("⚠️ The LLM could not analyse") < text.index("📌 Headlines")  # how it was made, first
    internal = [h[1:] for h in page.hrefs if h.startswith("#")]
    assert len(internal) >= 2 * len(d.entries) + 3  # table + contents for each commit, the groups, …
    assert set(internal) <= page.ids  # every in-page link lands on an element
    assert all(h.startswith(("#", "https://github.com/acme/widgets")) for h in page.hrefs)


def test_a_low_commit_shows_its_summary_and_coverage_but_not_the_long_parts():
    d = day(3)  # high, medium, low
    html = render_page(d)
    low = html.split('id="g-low"', 1)[1]
    assert "📋 Summary" in low and "📁 Coverage" in low
    assert "🧭 Impact" not in low and "⚠️ Risks" not in low  # as the Markdown report


def test_the_page_speaks_the_digest_s_language():
    page = Page(render_page(day(3, lang="zh"), expires=int(time.time()) + 3600))
    assert 'lang="zh"' in render_page(day(3, lang="zh"))
    for words in (
        "每日更新报告（2026-01-28）",
        "📋 目录",
        "🗂 提交列表",
        "📌 要点",
        "📋 变更摘要",
        "⚠️ 潜在风险",
        "跳到目录",
        "↑ 目录",
        "此链接有效期至",
    ):
        assert words in page.text, words
    assert "Contents" not in page.text and "Summary" not in page.text


def test_hostile_text_is_printed_as_text_everywhere_on_the_page():
    hostile_llm = "</li><script>alert(1)</script> **bold** `<b>code</b>` [x](javascript:alert(1))"
    d = day(3, titles={0: HOSTILE, 1: 'x" onmouseover="alert(1)', 2: "\u202eevil\u202c \x1b[2J"})
    e0 = d.entries[0]
    from dataclasses import replace

    analysis = replace(e0.analysis, summary=hostile_llm, risks=(hostile_llm,))
    commit = replace(e0.commit, author="<b>Mallory</b>", url="javascript:alert(1)")
    d = replace(
        d,
        entries=(replace(e0, commit=commit, analysis=analysis), *d.entries[1:]),
        headline=(hostile_llm,),
        notices=("<marquee>notice</marquee>",),
    )
    html = render_page(d)
    page = Page(html)
    assert set(page.tags) <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "header",
        "h1",
        "h2",
        "h3",
        "p",
        "a",
        "section",
        "ul",
        "li",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "nav",
        "article",
        "code",
        "strong",
        "span",
        "br",
        "footer",
    }
    assert "script" not in page.tags and "img" not in page.tags and "marquee" not in page.tags
    assert HOSTILE in page.text and "<b>Mallory</b>" in page.text and "<script>alert(1)</script>" in page.text
    assert "javascript:" not in "".join(page.hrefs)
    assert 'onmouseover="alert' not in html and "\u202e" not in html and "\x1b" not in html
    assert "<strong>bold</strong>" in html and "<code>&lt;b&gt;code&lt;/b&gt;</code>" in html


@pytest.mark.parametrize(
    "raw,html",
    [
        ("plain", "plain"),
        ("a `x<y` b", "a <code>x&lt;y</code> b"),
        ("**strong** & weak", "<strong>strong</strong> &amp; weak"),
        ("line one\n\n  line two  ", "line one<br>line two"),
        ("**`<i>`**", "<strong><code>&lt;i&gt;</code></strong>"),
        ("\"quoted\" 'single'", "&#34;quoted&#34; &#39;single&#39;"),
    ],
)
def test_prose_keeps_code_and_bold_and_escapes_everything_else(raw, html):
    assert str(prose(raw)) == html


# --- signed links -------------------------------------------------------------------------------------


def test_a_signature_covers_the_id_and_the_expiry():
    key, rid = b"k" * 32, signing.new_report_id()
    exp = 2_000_000_000
    sig = signing.sign(key, rid, exp)
    assert signing.verify(key, rid, str(exp), sig, now=exp - 1)
    assert not signing.verify(key, rid, str(exp), sig, now=exp)  # expired at exp
    assert not signing.verify(key, rid, str(exp + 1), sig, now=0)  # a later expiry, same MAC
    assert not signing.verify(key, signing.new_report_id(), str(exp), sig, now=0)  # another report
    assert not signing.verify(b"x" * 32, rid, str(exp), sig, now=0)  # another deployment's key
    assert not signing.verify(key, rid, str(exp), sig[:-1] + ("A" if sig[-1] != "A" else "B"), now=0)
    arabic = str(exp).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))  # int() reads these too
    for bad_exp in ("", "-1", "1e9", " 2000000000", "9" * 13, "0" + str(exp), arabic, f"{exp}\n"):
        assert not signing.verify(key, rid, bad_exp, sig, now=0)
    for bad_id in ("", "../etc", rid + "/", "a" * 65):
        assert not signing.verify(key, bad_id, str(exp), signing.sign(key, bad_id, exp), now=0)


async def test_every_process_of_a_deployment_signs_with_one_key_kept_in_redis(make_services):
    first = await make_services(public_base_url=PUBLIC)
    second = await make_services(public_base_url=PUBLIC)  # another process: same Redis and prefix
    link = await first.reports.publish(day(2))
    parts = urlsplit(link)
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    shown = await second.reports.respond(parts.path.rsplit("/", 1)[1], q["exp"], q["sig"])
    assert shown.status == 200
    stored = await first.store.get_json(first.store.k(signing.KEY_NAME))
    assert re.fullmatch(r"[0-9a-f]{64}", stored)  # 256 random bits, made once
    configured = await make_services(public_base_url=PUBLIC, report_signing_key="operator-chosen-key")
    refused = await configured.reports.respond(parts.path.rsplit("/", 1)[1], q["exp"], q["sig"])
    assert refused.status == 403  # REPORT_SIGNING_KEY replaces the generated key


async def test_the_link_opens_the_page_with_headers_that_forbid_scripts(web):
    services, base, get = web
    link = await services.reports.publish(day(4, titles={1: HOSTILE}))
    assert link.startswith(PUBLIC + "/r/")
    status, html, headers = await get(local(link, base))
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # scripts fall back to 'none'
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store" and "noindex" in headers["X-Robots-Tag"]
    assert HOSTILE in Page(html).text and "<img" not in html
    status, _, headers = await get(local(link, base), **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"


async def test_two_deliveries_of_one_digest_get_two_unguessable_links(web):
    services, _base, _get = web
    a, b = await services.reports.publish(day(2)), await services.reports.publish(day(2))
    assert a != b and urlsplit(a).path != urlsplit(b).path


async def test_an_empty_day_or_an_unset_public_url_has_no_link(make_services):
    on = await make_services(public_base_url=PUBLIC)
    off = await make_services()
    assert await on.reports.publish(day(0)) is None
    assert await off.reports.publish(day(3)) is None


async def test_the_page_offers_its_release_notes_as_a_markdown_file(web):
    """The page links its digest's release notes; the link, resolved from the page as a browser
    does, downloads the changelog of that very digest, in its language (escaping: test_changelog.py)."""
    from urllib.parse import urljoin

    from bot.render.changelog import render_changelog

    services, base, get = web
    d = day(9, lang="zh")
    page_url = local(await services.reports.publish(d), base)
    status, html, _ = await get(page_url)
    links = [h for h in Page(html).hrefs if "changelog.md" in h]
    assert status == 200 and len(links) == 1 and "⬇️ 发布说明（Markdown）" in Page(html).text
    status, body, headers = await get(urljoin(page_url, links[0]))
    assert status == 200 and headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert headers["Content-Disposition"] == 'attachment; filename="acme-widgets-2026-01-28-changelog.md"'
    assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Cache-Control"] == "no-store"
    assert body == render_changelog(d) and body.startswith("# ") and "## ✨ 新功能" in body
    assert all(e.commit.short_sha in body for e in d.entries if e.importance.value != "low")


async def test_the_release_notes_download_is_refused_like_the_page(web):
    services, base, get = web
    link = local(await services.reports.publish(day(3, repo="acme/secret-repo")), base)
    download = link.replace("?", "/changelog.md?", 1)
    assert (await get(download))[0] == 200
    for changed in (tamper(link, sig="A" * 43), tamper(link, exp="99999999999")):
        status, body, headers = await get(changed.replace("?", "/changelog.md?", 1))
        assert status == 403 and "secret-repo" not in body and headers["Content-Type"].startswith("text/html")
    status, body, _ = await get(download.split("?", 1)[0])  # no signature at all
    assert status == 403 and "secret-repo" not in body
    report_id = urlsplit(link).path.rsplit("/", 1)[1]
    await services.store.delete(services.store.k("report", report_id))
    status, body, _ = await get(download)
    assert status == 404 and "secret-repo" not in body


def test_an_empty_digest_offers_no_download():
    html = render_page(day(0), download="x/changelog.md?exp=1&sig=y")
    assert "changelog.md" not in html


REFUSALS = {
    "another signature": lambda u: tamper(u, sig="A" * 43),
    "a later expiry": lambda u: tamper(u, exp=str(int(parse_qs(urlsplit(u).query)["exp"][0]) + 86400)),
    "another report id": lambda u: tamper(u, id=signing.new_report_id()),
    "no signature": lambda u: tamper(u, sig=None),
    "no expiry": lambda u: tamper(u, exp=None),
    "nothing but the id": lambda u: u.split("?", 1)[0],
    "a path in the id": lambda u: tamper(u, id="..%2F..%2Fetc"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
async def test_a_changed_link_is_refused_and_reveals_nothing(web, case):
    services, base, get = web
    secret_title = "fix: rotate the leaked deploy key of project-nightingale"
    link = await services.reports.publish(day(3, titles={0: secret_title}, repo="acme/secret-repo", repo_url=None))
    status, html, headers = await get(REFUSALS[case](local(link, base)), **{"Accept-Language": "en-GB,en;q=0.8"})
    assert status == 403
    assert "project-nightingale" not in html and "secret-repo" not in html and "2026-01-28" not in html
    assert Page(html).text.endswith(
        "This link is not valid, or it has expired. Ask for the digest again to get a fresh link."
    )
    assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert (await get(local(link, base)))[0] == 200  # the untouched link still works


async def test_an_expired_link_is_refused_like_a_forged_one(web, make_services):
    _services, base, get = web
    earlier = await make_services(
        lambda: datetime.now(UTC) - timedelta(seconds=120), public_base_url=PUBLIC, report_link_ttl=60
    )
    link = await earlier.reports.publish(day(2))  # made two minutes ago, valid for one
    status, html, _ = await get(local(link, base))
    forged = await get(tamper(local(link, base), sig="A" * 43))
    assert status == 403 and (status, html) == forged[:2]  # nothing tells expired from forged


async def test_a_good_link_whose_report_is_gone_is_not_found(web):
    services, base, get = web
    link = await services.reports.publish(day(2))
    report_id = urlsplit(link).path.rsplit("/", 1)[1]
    await services.store.delete(services.store.k("report", report_id))
    status, html, _ = await get(local(link, base))
    assert status == 404 and "acme/widgets" not in html and "no longer kept" in html


@pytest.mark.parametrize(
    "path", ["/reports/", "/reports", "/r/", "/r", "/r/?exp=1&sig=x", "/reports/index.html", "/r/.", "/static/", "/"]
)
async def test_no_url_lists_reports(web, path):
    services, base, get = web
    await services.reports.publish(day(3, repo="acme/secret-repo"))
    status, html, _ = await get(base + path)
    assert status in (403, 404)
    assert "secret-repo" not in html and "/r/" not in html


async def test_a_refusal_speaks_the_visitor_s_language(web):
    services, base, get = web
    link = await services.reports.publish(day(2))
    status, html, _ = await get(tamper(local(link, base), sig="A" * 43), **{"Accept-Language": "zh-CN,zh;q=0.9"})
    assert status == 403 and "此链接无效或已过期" in html and 'lang="zh"' in html


async def test_while_redis_is_down_a_link_gets_one_sentence_and_then_works_again(make_services, tmp_path):
    from tests.shared.redis_proc import RedisProcess, free_port

    redis = RedisProcess(free_port(), tmp_path, durable=True)
    redis.start()
    services = await make_services(public_base_url=PUBLIC, redis_url=f"redis://127.0.0.1:{redis.port}/0")
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    try:
        link = local(await services.reports.publish(day(2)), f"http://127.0.0.1:{bound_port(runner)}")
        async with aiohttp.ClientSession() as http:
            redis.stop()
            async with http.get(link, headers={"Accept-Language": "en"}) as resp:
                assert resp.status == 503
                assert Page(await resp.text()).text.endswith(
                    "Reports cannot be shown right now. Please try again in a minute."
                )
            redis.start()  # the same data back (append-only file): the link works again
            for _ in range(100):  # once Redis has loaded its file
                async with http.get(link) as resp:
                    status, html = resp.status, await resp.text()
                if status != 503:
                    break
                await asyncio.sleep(0.1)
            assert status == 200 and "acme/widgets" in html
    finally:
        await runner.cleanup()
        if redis.proc.poll() is None:
            redis.stop()


# --- end to end: the link in every platform's parent message ----------------------------------------


@pytest.fixture
def widgets(tmp_path) -> GitRepo:
    from tests.shared.slack import build_widgets

    return build_widgets(tmp_path / "widgets", date(2026, 1, 28))


@pytest.mark.parametrize("public", [PUBLIC, None], ids=["with PUBLIC_BASE_URL", "without"])
async def test_slack_parent_links_the_report(make_settings, widgets, public):
    from handlers.slack import build_slack
    from tests.fakes.slack_server import FakeSlack, SlackSender
    from tests.shared.slack import CHANNEL, FAST, HIGH_TITLE, MEDIUM_TITLE, SECRET

    with FakeSlack() as slack:
        settings = make_settings(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            public_base_url=public,
        )
        services = Services.build(settings)
        chat = App.build(services)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        routes = adapter.http_routes() + report_routes(services.reports)  # as `serve` and `run` build it
        runner = await start_server(build_app(services.store, routes), "127.0.0.1", 0)
        base = f"http://127.0.0.1:{bound_port(runner)}"
        sender = SlackSender(base + "/slack/events", SECRET)
        try:
            status, _ = await sender.slash("2026-01-28")
            assert status == 200
            await chat.drain()
            (parent,) = slack.top_level(CHANNEL)
            blocks = json.dumps(parent.blocks, ensure_ascii=False)
            links = LINK.findall(blocks)
            thread = json.dumps([m.blocks for m in slack.replies(CHANNEL, parent.ts)])
            assert "/r/" not in thread  # the link is the parent's only
            if public is None:
                assert links == [] and "Full report" not in blocks
                return
            assert len(links) == 1 and f"<{links[0]}|📄 Full report>" in blocks
            async with aiohttp.ClientSession() as http, http.get(local(links[0], base)) as resp:
                assert resp.status == 200
                page = Page(await resp.text())
            assert HIGH_TITLE in page.text and MEDIUM_TITLE in page.text  # the hostile title, as text
            assert "Daily update report (2026-01-28)" in page.text and "acme/widgets" in page.text
            assert slack.block_errors == []
        finally:
            await sender.close()
            await chat.drain()
            await adapter.close()
            await runner.cleanup()
            await services.aclose()


@pytest.mark.parametrize("public", [PUBLIC, None], ids=["with PUBLIC_BASE_URL", "without"])
async def test_feishu_parent_links_the_report(make_settings, tmp_path, public):
    from tests.shared.feishu import HOSTILE_TITLE, feishu_env

    day0 = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)  # 11:00 in Asia/Shanghai
    repo = GitRepo(tmp_path / "rocket")
    repo.commit(HOSTILE_TITLE, {"src/export.py": "def export(since=None):\n    return since\n" * 30}, when=day0)
    repo.commit(
        "fix: cache expiry off by one",
        {"src/cache.py": "# entries expire after TTL seconds\n" * 40},
        when=day0.replace(hour=4),
    )
    async with feishu_env(make_settings, repo, public_base_url=public) as env:
        parent, _ = await env.digest()
        card = env.fake.card(parent)
        urls = re.findall(r'"default_url":\s*"([^"]+)"', json.dumps(card, ensure_ascii=False))
        reports = [u for u in urls if "/r/" in u]
        if public is None:
            assert reports == [] and "Full report" not in json.dumps(card, ensure_ascii=False)
            return
        assert len(reports) == 1 and LINK.fullmatch(reports[0])
        # the Feishu test app serves only its adapter's routes: serve the page as `serve` does
        runner = await start_server(build_app(env.chat.store, report_routes(env.chat.services.reports)), "127.0.0.1", 0)
        try:
            async with env.session.get(local(reports[0], f"http://127.0.0.1:{bound_port(runner)}")) as resp:
                assert resp.status == 200
                page = Page(await resp.text())
        finally:
            await runner.cleanup()
        assert HOSTILE_TITLE in page.text and "cache expiry" in page.text


@pytest.mark.parametrize("public", [PUBLIC, None], ids=["with PUBLIC_BASE_URL", "without"])
async def test_console_parent_links_the_report(make_settings, widgets, public):
    from tests.shared.slack import HIGH_TITLE

    services = Services.build(make_settings(default_repo=str(widgets.path), default_lang="en", public_base_url=public))
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform})
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    try:
        await ConsoleChat(chat.router, platform).handle("/digest 2026-01-28")
        await chat.drain()
        shown = out.getvalue()
        parent = shown.split("[#1] (updated) ", 1)[1].split("\n  ↳", 1)[0]
        links = LINK.findall(shown)
        if public is None:
            assert links == [] and "Full report" not in shown
            return
        assert len(links) == 1 and f"📄 Full report: {links[0]}" in parent
        async with (
            aiohttp.ClientSession() as http,
            http.get(local(links[0], f"http://127.0.0.1:{bound_port(runner)}")) as resp,
        ):
            assert resp.status == 200 and HIGH_TITLE in Page(await resp.text()).text
    finally:
        await runner.cleanup()
        await services.aclose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_serves_the_pages_its_terminal_digests_link(redis_url, widgets, tmp_path):
    """`python -m bot run` with no chat platform: the terminal chat, and with PUBLIC_BASE_URL set
    the web server on PORT that serves the linked pages."""
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "REDIS_", "DEFAULT_", "PUBLIC_", "REPORT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"runreport{port}:",
            "DEFAULT_REPO": str(widgets.path),
            "DEFAULT_LANG": "zh",
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "PUBLIC_BASE_URL": PUBLIC,
            "HOST": "127.0.0.1",
            "PORT": str(port),
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(x) for x in iter(proc.stdout.readline, "")] + [lines.put("")], daemon=True
    ).start()  # a blocked read must not hang the test: lines arrive here
    try:
        proc.stdin.write("/digest 2026-01-28\n")
        proc.stdin.flush()
        parent = ""
        while "每日更新报告" not in parent:  # the digest's parent message (the progress line before it)
            parent = lines.get(timeout=120)
            assert parent, proc.stderr.read()
        parent += lines.get(timeout=30)  # the report's line follows the title and stats
        parent += lines.get(timeout=30)
        found = LINK.search(parent)
        assert found and "📄 完整报告" in parent, parent
        link = found.group(0)
        with urllib.request.urlopen(local(link, f"http://127.0.0.1:{port}"), timeout=30) as resp:
            html = resp.read().decode()
        assert resp.status == 200 and 'lang="zh"' in html and "每日更新报告（2026-01-28）" in html
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


def test_the_settings_refuse_a_public_url_without_a_scheme():
    from settings import ConfigError, load_settings

    with pytest.raises(ConfigError, match="PUBLIC_BASE_URL must start with http:// or https://"):
        load_settings(_env_file=None, public_base_url="digest.example.com")
    with pytest.raises(ConfigError, match="REPORT_LINK_TTL"):
        load_settings(_env_file=None, report_link_ttl=10)
