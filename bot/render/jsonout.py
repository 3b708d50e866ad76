"""The digest as data (`--format json`). The schema is documented in the README."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..core.models import Digest, Importance, to_dict
from ..diffs.reader import coverage_line
from .upgrade import upgrade_data, upgrade_report

SCHEMA = "digest-bot/digest@1"


def digest_data(d: Digest, areas: Mapping[str, str] | None = None) -> dict:
    data = to_dict(d)
    if d.window.is_range:  # a range of refs: its ends' SHAs, and the upgrade report's sections
        data["upgrade"] = upgrade_data(upgrade_report(d, areas))
    else:  # a window of days: no range keys at all
        data["window"].pop("base", None)
        data["window"].pop("head", None)
    data["stats"] = {"total": len(d.entries), **{imp.value: d.count(imp) for imp in Importance}}
    if d.fork is None:  # read against no fork: no downstream keys at all
        data.pop("fork", None)
    data.pop("kept_as", None)  # a Redis key: the bot's own business
    data.pop("links", None)  # the host's link templates: each entry carries its links instead
    if not d.uncorrected_headline:  # absent unless readers' corrections put a model's headline aside
        data.pop("uncorrected_headline", None)
    for entry, raw in zip(d.entries, data["entries"]):
        if entry.downstream is None:  # absent when the commit touches nothing the fork patches
            raw.pop("downstream", None)
        if not entry.alerted:  # absent unless the commit was posted on its own as an alert first
            raw.pop("alerted", None)
        for key in ("branches", "backport_of", "backports"):  # absent in a digest of one branch
            if not raw.get(key):
                raw.pop(key, None)
        raw["importance"] = entry.importance.value  # a reader's correction, when one is in force
        raw["pr_url"] = d.change_url(entry.commit.pr_number)  # as the host links it (None without a PR)
        if entry.corrected_from is None:  # absent when nobody corrected the commit's level
            raw.pop("corrected_by", None)
            raw.pop("corrected_from", None)
            raw.pop("corrected_reason", None)
        a = entry.analysis
        if raw.get("analysis") and not (a and a.improved_at):  # absent unless a retry improved it later
            raw["analysis"].pop("improved_at", None)
            raw["analysis"].pop("improved_from", None)
        raw["coverage_line"] = coverage_line(a.coverage, d.lang) if a and a.coverage else None
    return data


def render_json(digests: Sequence[Digest], areas: Mapping[str, str] | None = None) -> str:
    return (
        json.dumps(
            {"schema": SCHEMA, "digests": [digest_data(d, areas) for d in digests]}, ensure_ascii=False, indent=2
        )
        + "\n"
    )
