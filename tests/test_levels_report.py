"""Level corrections on the report page (a signed form per commit, posted back to the page's own
signed URL) and in the CLI's Markdown and JSON: real web app, real Redis, a real `python -m bot`
process. Asserted is what a reader sees: the page's text after each tap, the CLI's output."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html.parser import HTMLParser

import aiohttp
import pytest

from bot.render.labels import PAGE_READER
from handlers.web import bound_port, build_app, report_routes, start_server
from tests.reportdata import day
from tests.shared.cli import cli_repo
from tests.shared.report_page import PUBLIC, Page, local


@pytest.fixture
def repo(tmp_path):
    return cli_repo(tmp_path)


class Forms(HTMLParser):
    """Each commit's level form on a page: sha → its hidden fields."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.forms: dict[str, dict[str, str]] = {}
        self._current: dict[str, str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._current = {}
        elif tag == "input" and self._current is not None:
            self._current[a["name"]] = a["value"]

    def handle_endtag(self, tag):
        if tag == "form" and self._current is not None:
            self.forms[self._current["sha"]] = self._current
            self._current = None


@pytest.fixture
async def page(make_services):
    """(services, open(link) → (status, html), tap(link, sha, direction, **changes) → (status, html))."""
    services = await make_services(public_base_url=PUBLIC)
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(runner)}"
    async with aiohttp.ClientSession() as http:

        async def open_(link: str) -> tuple[int, str]:
            async with http.get(local(link, base)) as resp:
                return resp.status, await resp.text()

        async def tap(
            link: str, sha: str, direction: str, form: dict | None = None, changes: dict | None = None
        ) -> tuple[int, str]:
            if form is None:
                _, html = await open_(link)
                form = Forms(html).forms[sha]
            fields = {**form, "dir": direction, **(changes or {})}
            async with http.post(local(link, base), data=fields) as resp:
                return resp.status, await resp.text()

        yield services, open_, tap
    await runner.cleanup()


async def test_a_tap_on_the_page_records_and_the_page_says_so(page):
    services, open_, tap = page
    d = day(3)  # high, medium, low
    high, medium, low = d.entries
    link = await services.reports.publish(d)
    status, html = await open_(link)
    assert status == 200 and set(Forms(html).forms) == {e.commit.sha for e in d.entries}
    assert "⬇️ Level too high" in Page(html).text and "⬆️ Level too low" in Page(html).text

    status, html = await tap(link, medium.commit.sha, "too_high")
    text = Page(html).text
    assert status == 200
    assert f"✅ Recorded: {medium.commit.short_sha} {medium.commit.title} will be shown as 🟢 Low from now on." in text
    assert "✏️ Level corrected to 🟢 Low by a reader of the report page (was 🟡 Medium)" in text
    assert "🔴 high 1 | 🟡 medium 0 | 🟢 low 2" in text
    # its reason fits its new level, and the headline is drawn again from the corrected levels: the
    # model's bullets (written for the old ones) put aside for rule-based ones, which say so
    assert "Low — Corrected to low by a reader; the bot had said medium: changes the public" in text
    assert (
        "A cache fix landed." not in text
        and "Main risks: Old scripts may break; Long-running exports. (rule-based)" in text
    )
    assert f"{high.commit.title}: {high.analysis.importance_reason}".replace("`", "") in text
    # the same link opened later (any reader, any time) shows it
    _, html = await open_(link)
    assert "Level corrected to 🟢 Low by a reader of the report page (was 🟡 Medium)" in Page(html).text
    assert "✅ Recorded" not in Page(html).text

    # the end of the scale: nothing recorded
    status, html = await tap(link, low.commit.sha, "too_high")
    assert f"{low.commit.short_sha} is already at the lowest level (🟢 Low): nothing recorded." in Page(html).text
    status, html = await tap(link, high.commit.sha, "too_low")
    assert "is already at the highest level (🔴 High)" in Page(html).text


async def test_forged_and_resent_forms_record_nothing(page):
    services, open_, tap = page
    d = day(3)
    high, medium, low = d.entries
    link = await services.reports.publish(d)
    _, html = await open_(link)
    forms = Forms(html).forms

    # a form whose commit was changed (its MAC no longer matches), or a made-up direction
    status, html = await tap(
        link, medium.commit.sha, "too_high", form=forms[medium.commit.sha], changes={"sha": low.commit.sha}
    )
    assert status == 400
    assert "That correction form is not valid (altered, or its link has expired): nothing recorded." in Page(html).text
    status, html = await tap(link, medium.commit.sha, "sideways", form=forms[medium.commit.sha])
    assert status == 400 and "That level button is not one of mine" in Page(html).text
    assert "🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in Page(html).text

    # a reload sends the same form again: recorded once
    status, html = await tap(link, high.commit.sha, "too_high", form=forms[high.commit.sha])
    assert "will be shown as 🟡 Medium" in Page(html).text
    status, html = await tap(link, high.commit.sha, "too_high", form=forms[high.commit.sha])
    assert "That tap was already recorded (the form was sent again): nothing more recorded." in Page(html).text
    assert "🔴 high 0 | 🟡 medium 2 | 🟢 low 1" in Page(html).text

    # a form posted to a link that is not ours is refused like the link itself
    status, _ = await tap(link.replace("sig=", "sig=A"), high.commit.sha, "too_high", form=forms[high.commit.sha])
    assert status == 403


async def test_a_correction_made_in_chat_shows_on_a_page_published_before_it(page):
    services, open_, _tap = page
    d = day(3, lang="zh")
    medium = d.entries[1]
    link = await services.reports.publish(d)
    await services.corrections.record(d.repo, medium.commit.sha, "high", "U0ANA", at=datetime.now(UTC))
    _, html = await open_(link)
    text = Page(html).text
    assert "✏️ 等级已由 U0ANA 纠正为 🔴 高（原为 🟡 中）" in text
    assert "⬇️ 等级偏高" in text
    assert PAGE_READER not in text


def test_the_cli_markdown_and_json_show_corrections(run, repo):
    first = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", "--format", "json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)["digests"][0]
    entry = data["entries"][0]
    sha, level = entry["commit"]["sha"], entry["importance"]
    assert "corrected_by" not in entry  # nobody corrected anything yet
    lower = {"high": "medium", "medium": "low", "low": "medium"}[level]
    feedback = repo.path.parent / "corrections.jsonl"
    feedback.write_text(json.dumps({"repo": str(repo.path), "sha": sha, "level": lower, "who": "ana"}) + "\n")
    imported = run("feedback", "import", str(feedback))
    assert imported.returncode == 0, imported.stderr

    second = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", "--format", "json")
    corrected = next(e for e in json.loads(second.stdout)["digests"][0]["entries"] if e["commit"]["sha"] == sha)
    assert (corrected["importance"], corrected["corrected_by"], corrected["corrected_from"]) == (lower, "ana", level)
    assert corrected["analysis"]["importance"] == lower
    markdown = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en")
    label = {"high": "🔴 High", "medium": "🟡 Medium", "low": "🟢 Low"}
    assert f"> ✏️ Level corrected to {label[lower]} by ana (was {label[level]})" in markdown.stdout
