"""The report page: its public address and what a browser-less reader sees of it."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

PUBLIC = "https://digest.example.com"


class Page(HTMLParser):
    """The parsed page: its visible text, every element id, every href, every tag name."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.chunks: list[str] = []
        self._skip = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a":
            self.hrefs.append(a.get("href", ""))
        if tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.chunks).split())


def local(link: str, base: str) -> str:
    """The public link as the reverse proxy in front of the web process would forward it."""
    link = link.replace("&amp;", "&")
    assert link.startswith(PUBLIC + "/r/"), link
    parts = urlsplit(link)
    return f"{base}{parts.path}?{parts.query}"
