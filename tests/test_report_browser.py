"""The report page in a real browser: headless Chromium driven by Playwright, the system's own
Chromium (no browser download). The page is fetched from the running web app through a signed
link, as a reader's phone would: it renders, fits a 390-pixel-wide screen without sideways
scrolling (in English and Chinese), every contents link scrolls to its commit, commit titles
crafted to run script run nothing, and a screenshot shows a page (not a blank one).

With no Chromium (or no playwright package) every test here is skipped and says so:
"no Chromium: browser tests skipped …". `.ci/run` installs Chromium with apt when it is missing.
Set CHROMIUM=/path/to/chrome to use another binary.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from handlers.web import bound_port, build_app, report_routes, start_server
from tests.reportdata import day

PUBLIC = "https://digest.example.com"
PHONE = {"width": 390, "height": 844}
CRAFTED = {
    1: '<img src=x onerror="window.__pwned=1">',
    4: "<script>window.__pwned=2</script>",
    7: '"><svg onload="window.__pwned=3">',
    9: "javascript:window.__pwned=4 " + "unbroken" * 40,  # also far wider than a phone
    12: "https://example.com/" + "a-very-long-path-segment/" * 12,
}
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    for candidate in (
        os.environ.get("CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        shutil.which("google-chrome"),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture
async def browser(tmp_path):
    """A Chromium page (fresh profile) at phone size; skips, saying why, when none can be had."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip(
            "no Chromium: browser tests skipped (the playwright package is not installed; pip install -e '.[test]')"
        )
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no Chromium: browser tests skipped (no chromium executable found; "
            "apt-get install chromium, or set CHROMIUM=/path/to/chrome)"
        )
    async with async_playwright() as pw:
        try:
            context = await pw.chromium.launch_persistent_context(
                str(tmp_path / "profile"),
                executable_path=executable,
                headless=True,
                args=ARGS,
                viewport=PHONE,
                device_scale_factor=1,
                is_mobile=True,
                has_touch=True,
                locale="en-US",
            )
        except Exception as exc:  # noqa: BLE001 — a Chromium that cannot start here is no Chromium
            pytest.skip(
                f"no Chromium: browser tests skipped ({executable} did not start: {str(exc).strip().splitlines()[0]})"
            )
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            yield page
        finally:
            await context.close()


@pytest.fixture
async def serve(make_services):
    """`await serve(digest)` → the local URL of its signed link, from a running web app."""
    services = await make_services(public_base_url=PUBLIC)
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(runner)}"

    async def publish(digest) -> str:
        parts = urlsplit(await services.reports.publish(digest))
        return f"{base}{parts.path}?{parts.query}"

    yield publish
    await runner.cleanup()


async def test_the_page_renders_every_commit(browser, serve):
    d = day(40, titles=CRAFTED)
    response = await browser.goto(await serve(d))
    assert response.status == 200
    assert await browser.title() == "Daily update report (2026-01-28) · acme/widgets"
    shown = await browser.inner_text("main")
    for e in d.entries:
        assert e.commit.title in shown.replace("\n", " ") or e.commit.title in shown, e.commit.title
    assert await browser.locator("article").count() == 40
    assert await browser.locator("h1").is_visible()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_page_fits_a_phone_without_sideways_scrolling(browser, serve, lang):
    await browser.goto(await serve(day(40, lang=lang, titles=CRAFTED)))
    width = await browser.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide on a {PHONE['width']}px screen"
    # nothing sticks out of the screen either (an overflowing element inside a clipped box)
    wide = await browser.evaluate("""() => [...document.querySelectorAll('main *')]
        .filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map(el => el.tagName + ': ' + el.textContent.slice(0, 40))""")
    assert wide == []
    size = await browser.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 14  # readable without zooming


async def test_every_contents_link_scrolls_to_its_commit(browser, serve):
    d = day(30)
    await browser.goto(await serve(d))
    links = browser.locator("nav.toc a")
    count = await links.count()
    assert count == 30 + 3  # every commit and the three groups
    # The last commit first: from the top of the page, its click must move far down.
    last = links.nth(count - 1)
    await browser.evaluate("window.scrollTo(0, 0)")
    await last.click()
    assert await browser.evaluate("window.scrollY") > 2000
    for i in range(count):
        link = links.nth(i)
        target = (await link.get_attribute("href"))[1:]
        await browser.evaluate("window.scrollTo(0, 0)")
        await link.click()
        await browser.wait_for_function(f"location.hash === '#{target}'")
        top, at_bottom = await browser.evaluate(f"""[document.getElementById('{target}').getBoundingClientRect().top,
            window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1]""")
        # it landed at the top of the screen, or as near as the page's end allows (and in view)
        assert -1 <= top < 40 or (at_bottom and top < PHONE["height"] - 40), (target, top)


async def test_crafted_titles_show_as_text_and_run_nothing(browser, serve):
    errors: list[str] = []
    browser.on("pageerror", lambda exc: errors.append(str(exc)))
    await browser.goto(await serve(day(15, titles=CRAFTED)))
    assert await browser.evaluate("typeof window.__pwned") == "undefined"
    assert await browser.evaluate("document.querySelectorAll('img, script, svg, iframe').length") == 0
    text = (await browser.inner_text("main")).replace("\n", " ")
    for title in list(CRAFTED.values())[:3]:
        assert title in text, title
    hrefs = await browser.evaluate("[...document.links].map(a => a.getAttribute('href'))")
    assert not [h for h in hrefs if h.lower().startswith("javascript:")]
    # hovering or clicking the crafted headings runs nothing either
    await browser.locator("article h3").nth(1).hover()
    await browser.locator("article h3").nth(1).click()
    assert await browser.evaluate("typeof window.__pwned") == "undefined" and errors == []


def _png_pixels(png: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, raw pixel rows) of an 8-bit RGB/RGBA PNG (Chromium's)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw, stride, out, prev = zlib.decompress(idat), width * bpp, bytearray(), bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return width, height, bpp, bytes(out)


def _variance(png: bytes) -> float:
    _width, _height, bpp, pixels = _png_pixels(png)
    grey = [sum(pixels[i : i + 3]) / 3 for i in range(0, len(pixels), bpp)]
    mean = sum(grey) / len(grey)
    return sum((g - mean) ** 2 for g in grey) / len(grey)


async def test_a_screenshot_shows_a_page_not_a_blank_one(browser, serve, tmp_path):
    await browser.set_content("<html><body style='background:#fff'></body></html>")
    blank = await browser.screenshot()
    assert _variance(blank) < 1  # the measure sees a blank page as blank
    await browser.goto(await serve(day(10)))
    shot = await browser.screenshot()
    (tmp_path / "report.png").write_bytes(shot)
    width, height, _, _ = _png_pixels(shot)
    assert (width, height) == (PHONE["width"], PHONE["height"])
    assert _variance(shot) > 100, "the screenshot is (nearly) one colour"


async def test_a_level_button_corrects_its_commit_and_the_page_says_so(browser, serve):
    d = day(3)  # high, medium, low
    medium = d.entries[1]
    await browser.goto(await serve(d))
    article = browser.locator(f"article#c-{medium.commit.sha[:12]}")
    async with browser.expect_navigation():
        await article.get_by_role("button", name="⬇️ Level too high").click()
    shown = await browser.inner_text("main")
    assert f"✅ Recorded: {medium.commit.short_sha} {medium.commit.title} will be shown as 🟢 Low from now on." in shown
    corrected = await browser.locator(f"article#c-{medium.commit.sha[:12]}").inner_text()
    assert corrected.splitlines()[0].startswith("🟢 ")
    assert "✏️ Level corrected to 🟢 Low by a reader of the report page (was 🟡 Medium)" in corrected
    assert "🔴 high 1 | 🟡 medium 0 | 🟢 low 2" in shown
    width = await browser.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]  # the buttons and the answer fit a phone too
    # the next tap from the redrawn page (fresh forms): the latest wins
    async with browser.expect_navigation():
        await (
            browser.locator(f"article#c-{medium.commit.sha[:12]}").get_by_role("button", name="⬆️ Level too low").click()
        )
    assert "will be shown as 🟡 Medium from now on." in await browser.inner_text("main")
    assert "✏️" not in await browser.locator(f"article#c-{medium.commit.sha[:12]}").inner_text()


async def test_the_release_notes_link_downloads_a_markdown_file(browser, serve):
    d = day(6)
    assert (await browser.goto(await serve(d))).status == 200
    async with browser.expect_download() as waiting:
        await browser.click("a[download]")
    download = await waiting.value
    assert download.suggested_filename == "acme-widgets-2026-01-28-changelog.md"
    saved = await download.path()
    body = Path(saved).read_text(encoding="utf-8")
    assert body.startswith("# ") and all(e.commit.short_sha in body for e in d.entries if e.importance.value != "low")
