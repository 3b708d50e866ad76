"""How a subscription and a conversation's settings read in one line: `subscribe` and `config`
confirm with them, `list` lists with them."""

from __future__ import annotations

from ...core.models import Subscription
from ...digest.authorfilter import as_typed
from ...i18n import text


def describe(sub: Subscription, lang: str) -> dict:
    """The fields of a subscription's line (the confirmation here, the listing of `list`)."""
    filters = "".join(
        [
            text(lang, "noise.sub_paths", globs=" ".join(sub.paths)) if sub.paths else "",
            text(lang, "noise.sub_exclude", globs=" ".join(sub.exclude)) if sub.exclude else "",
            text(lang, "authors.sub_authors", names=" ".join(as_typed(sub.authors))) if sub.authors else "",
            text(lang, "authors.sub_exclude", names=" ".join(as_typed(sub.exclude_authors)))
            if sub.exclude_authors
            else "",
            text(lang, "noise.sub_bots_shown") if sub.bots == "show" else "",
            text(lang, "downstream.sub_fork", fork=sub.fork) if sub.fork else "",
            text(lang, "alerts.sub_on") if sub.alerts == "high" else "",
        ]
    )
    fields = dict(
        repo=sub.repo,
        at=sub.at,
        tz=sub.tz,
        lang=sub.lang,
        min=text(lang, f"notices.min.{sub.min_importance.value}"),
        branch=text(lang, "notices.sub_branch", branch=sub.branch) if sub.branch else "",
        empty="" if sub.post_empty else text(lang, "notices.sub_skip_empty"),
        filters=filters,
    )
    if sub.weekly:
        fields["weekday"] = text(lang, f"week.{sub.weekday}")
    return fields


def line_key(sub: Subscription, kind: str) -> str:
    """The catalogue key of a subscription's `kind` line (subscribed, resubscribed, list_item)."""
    return f"week.{kind}" if sub.weekly else f"notices.{kind}"


def settings_line(cfg) -> str:
    """The conversation's settings in one line, in its language."""
    lang = cfg.lang
    return text(
        lang,
        "notices.settings",
        lang=cfg.lang,
        tz=cfg.tz,
        questions=text(lang, f"notices.questions_{cfg.questions}"),
        file=text(lang, "notices.on" if cfg.file else "notices.off"),
    )
