"""The pages a person installing the app sees (OAuth installs): "Add to Slack", what to do next once
installed, and why an install did not complete, each in the browser's language (Accept-Language:
Chinese or English, else the bot's default). Every sentence is in the catalogue; names Slack
handed back (the workspace's) are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from urllib.parse import urlsplit

from bot.i18n import browser_language, text

# Bolt's failure reasons, and what the person reads for each (anything else: "failed").
REASONS = {
    "access_denied": "denied",
    "invalid_browser": "expired",
    "invalid_state": "expired",
    "missing_code": "failed",
    "invalid_code": "failed",
    "storage_error": "unavailable",
    "unavailable": "unavailable",
}


def authorize_url(api_url: str) -> str:
    """Slack's authorize page on the Web API's host (https://slack.com/oauth/v2/authorize)."""
    parts = urlsplit(api_url)
    return f"{parts.scheme}://{parts.netloc}/oauth/v2/authorize"


def browser_lang(headers: Mapping, default: str) -> str:
    """The first of zh / en the browser asks for (Accept-Language, in its order), else `default`."""
    raw = headers.get("accept-language") or headers.get("Accept-Language") or ""
    if isinstance(raw, (list, tuple)):
        raw = ",".join(raw)
    return browser_language(str(raw), default)


class InstallPages:
    def __init__(self, default_lang: str):
        self.default_lang = default_lang

    def install(self, url: str, headers: Mapping) -> str:
        lang = browser_lang(headers, self.default_lang)
        body = (
            f"<p>{escape(text(lang, 'slack_install.install_intro'))}</p>"
            f'<p><a href="{escape(url, quote=True)}" id="add-to-slack">'
            f"{escape(text(lang, 'slack_install.add_to_slack'))}</a></p>"
        )
        return _html(lang, text(lang, "slack_install.install_title"), body)

    def done(self, record: Mapping, headers: Mapping) -> str:
        lang = browser_lang(headers, self.default_lang)
        name = record.get("team_name") or record.get("enterprise_name") or record.get("tenant") or ""
        steps = "".join(
            f"<li>{escape(text(lang, key))}</li>"
            for key in ("slack_install.next_invite", "slack_install.next_subscribe", "slack_install.next_help")
        )
        body = f"<p>{escape(text(lang, 'slack_install.done', team=name))}</p><ol>{steps}</ol>"
        return _html(lang, text(lang, "slack_install.done_title"), body)

    def failed(self, reason: str, headers: Mapping) -> str:
        lang = browser_lang(headers, self.default_lang)
        why = text(lang, f"slack_install.failed_{REASONS.get(reason, 'failed')}")
        body = f'<p>{escape(why)}</p><p><a href="/slack/install">{escape(text(lang, "slack_install.again"))}</a></p>'
        return _html(lang, text(lang, "slack_install.failed_title"), body)


def _html(lang: str, title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title></head>"
        f'<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">'
        f"<h1>{escape(title)}</h1>{body}</body></html>"
    )
