"""One commit → one `Analysis`: through the LLM when there is one, else the offline rules.

The LLM path renders `prompts/analyze_commit.{lang}.j2` with the commit's text and as much diff
as the prompt budget allows, asks for one JSON object, validates it against one schema, and
retries exactly once (saying what was wrong) when the answer was cut off or invalid. A second
failure, or an unreachable endpoint, falls back to the offline analysis marked "fallback" with
a note saying why — a digest never loses a commit and never shows a half-parsed answer.

Everything taken from the repository (messages, PR text, paths, the diff) is untrusted data:
it goes inside tagged blocks, and any of our block tags inside it is defanged first, so a commit
cannot close its block and talk to the model as if it were us.
"""
from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

from ..diffs import DiffSelection, estimate_tokens, select_diff
from ..models import Analysis, ChangeType, Commit, FileChange, Importance, Insights
from ..prompts import Prompts, RenderedPrompt
from ..redact import record as record_redactions, redact, redact_text
from . import heuristic
from .llm import LLM, LLMError

log = logging.getLogger(__name__)

JOB = "analyze_commit"
# Room kept free in the prompt for the retry's feedback message and the estimate's error.
PROMPT_MARGIN_TOKENS = 300
BODY_CHARS = 4000  # a commit message beyond this is squash noise, not signal
PR_BODY_CHARS = 3000
TITLE_CHARS = 300
FILES_LISTED = 60  # the per-file summary lists the biggest files, then counts the rest
LEFT_OUT_LISTED = 40
# When a small budget cannot hold the full lists next to a useful diff, the prompt shrinks in
# these steps: (files listed, left-out files listed, share of message/PR text kept).
SHRINK_STEPS = ((FILES_LISTED, LEFT_OUT_LISTED, 1.0), (25, 15, 1.0), (10, 5, 0.5), (0, 0, 0.25))
NO_DIFF = "(no diff available)"

# The tags of every data block in the prompts. Inside data, any of them (opening or closing, any
# case or spacing) is rewritten with look-alike brackets so it cannot end or open a block.
DATA_TAGS = ("commit", "pr_description", "reverted_commit", "files", "files_left_out", "diff",
             "commits")
_TAG = re.compile(r"<(\s*/?\s*(?:%s)\b[^<>]*)>" % "|".join(DATA_TAGS), re.IGNORECASE)

RETRY_FEEDBACK = {
    "en": ("Your previous answer {problem}. Answer again with the same JSON object, more "
           "concisely (shorter strings, at most 3 items per list), and nothing but the JSON."),
    "zh": ("你上一次的回答{problem}。请重新输出同一结构的 JSON 对象，更简洁一些（字符串更短，"
           "每个列表最多 3 项），只输出 JSON。"),
}
PROBLEM_CUT_OFF = {"en": "was cut off at the output limit", "zh": "超出输出长度被截断"}
PROBLEM_INVALID = {"en": "was not valid: {reason}", "zh": "未通过校验：{reason}"}


class InvalidAnswer(ValueError):
    """The model's answer does not match the schema; the message says how, in a few words."""


# --- untrusted text ----------------------------------------------------------------------------

def defang(text: str) -> str:
    """`text` with our block tags neutralised: `</diff>` becomes `‹/diff›`."""
    return _TAG.sub(lambda m: f"‹{m.group(1)}›", text)


def clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def untrusted(text: str | None, limit: int) -> str:
    """Repository text made safe for a data block: clipped, secrets redacted, tags defanged."""
    return defang(redact_text(clip(text or "", limit)))


def withheld(commit: Commit, pr_body: str | None, selection: DiffSelection | None) -> Counter:
    """Secrets kept out of this commit's prompt, by kind: its texts' and its diff's."""
    kinds: Counter = Counter(dict(selection.kinds)) if selection else Counter()
    for text in (commit.author, commit.title, commit.body, pr_body):
        kinds.update(redact(text).kinds)
    return kinds


# --- answer validation -------------------------------------------------------------------------

CHANGE_TYPES = tuple(t.value for t in ChangeType)
IMPORTANCES = tuple(i.value for i in Importance)
INSIGHT_KEYS = ("architecture", "performance", "security")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_answer(text: str) -> dict[str, Any]:
    """The answer's JSON object (tolerating a markdown fence around it)."""
    stripped = _FENCE.sub("", text.strip())
    try:
        data = json.loads(stripped)
    except ValueError:
        start, end = stripped.find("{"), stripped.rfind("}")
        try:
            data = json.loads(stripped[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            data = None
        if data is None:
            raise InvalidAnswer("the answer is not a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidAnswer("the answer is not a JSON object")
    return data


def _required_text(data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidAnswer(f'"{key}" is missing or empty')
    return value.strip()


def _optional_text(data: dict, key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidAnswer(f'"{key}" must be a string')
    return value.strip()


def _enum(data: dict, key: str, allowed: tuple[str, ...]) -> str:
    value = _required_text(data, key).lower()
    if value not in allowed:
        raise InvalidAnswer(f'"{key}" is {value!r}, not one of {", ".join(allowed)}')
    return value


def _text_list(data: dict, key: str) -> tuple[str, ...]:
    """A list of strings; a single string is accepted as a one-item list."""
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidAnswer(f'"{key}" must be a list of strings')
    return tuple(v.strip() for v in value if v.strip())


def _insights(data: dict) -> Insights:
    value = data.get("insights")
    if value is None:
        return Insights()
    if not isinstance(value, dict):
        raise InvalidAnswer('"insights" must be an object with architecture, performance, security')
    return Insights(**{key: _optional_text(value, key) for key in INSIGHT_KEYS})


def validate_answer(data: dict[str, Any]) -> Analysis:
    """The schema of prompts/analyze_commit.*.j2. Required: change_type, importance,
    importance_reason, summary; the rest may be empty (low-importance answers are short)."""
    return Analysis(
        change_type=ChangeType(_enum(data, "change_type", CHANGE_TYPES)),
        importance=Importance(_enum(data, "importance", IMPORTANCES)),
        importance_reason=_required_text(data, "importance_reason"),
        summary=_required_text(data, "summary"),
        impact=_optional_text(data, "impact"),
        insights=_insights(data),
        risks=_text_list(data, "risks"),
        recommendations=_text_list(data, "recommendations"),
    )


# --- the prompt ----------------------------------------------------------------------------------

def files_summary(files: Sequence[FileChange], listed: int = FILES_LISTED) -> str:
    """One line per file, biggest first: `modified src/app.py (+12 -3)`; the rest counted."""
    ranked = sorted(files, key=lambda f: f.changes, reverse=True)
    lines = []
    for f in ranked[:listed]:
        path = f"{f.previous_path} → {f.path}" if f.previous_path and f.previous_path != f.path else f.path
        size = "binary" if f.binary else f"+{f.additions} -{f.deletions}"
        lines.append(f"{f.status} {path} ({size})")
    rest = ranked[listed:]
    if rest:
        lines.append(f"… {len(rest)} more files (+{sum(f.additions for f in rest)} "
                     f"-{sum(f.deletions for f in rest)})")
    return defang(redact_text("\n".join(lines))) or "(no file list available)"


def left_out_list(selection: DiffSelection | None, listed: int = LEFT_OUT_LISTED) -> str:
    """The files the diff block does not show in full, with why."""
    if selection is None:
        return ""
    cov = selection.coverage
    lines = [f"{path} — {reason}" for path, reason in cov.omitted[:listed]]
    if len(cov.omitted) > listed:
        lines.append(f"… {len(cov.omitted) - listed} more")
    lines += [f"{path} — clipped" for path in cov.partial]
    return defang(redact_text("\n".join(lines)))


def revert_target(commit: Commit, reverted: Commit | None) -> str:
    if reverted is not None:
        return defang(redact_text(f"{reverted.short_sha} {clip(reverted.title, TITLE_CHARS)}"))
    return commit.reverts or ""


def totals(commit: Commit, files: Sequence[FileChange]) -> tuple[int, int, int]:
    """(files_changed, additions, deletions): the listing's totals when it has them (a source
    may cap the file list), else the sums over `files`."""
    files_changed = commit.files_changed if commit.files_changed is not None else len(files)
    additions = commit.additions if commit.additions is not None else sum(f.additions for f in files)
    deletions = commit.deletions if commit.deletions is not None else sum(f.deletions for f in files)
    return files_changed, additions, deletions


def prompt_variables(commit: Commit, files: Sequence[FileChange], *, pr_body: str | None,
                     reverted: Commit | None, selection: DiffSelection | None,
                     shrink: tuple[int, int, float] = SHRINK_STEPS[0]) -> dict[str, Any]:
    """Everything analyze_commit.*.j2 needs; `selection=None` renders it without a diff (to
    measure how much room the diff has); `shrink` is one of SHRINK_STEPS."""
    files_changed, additions, deletions = totals(commit, files)
    files_listed, left_out_listed, text_share = shrink
    return {
        "repo": defang(commit.repo),
        "short_sha": commit.short_sha,
        "author": untrusted(commit.author, 200),
        "committed_at": commit.committed_at.strftime("%Y-%m-%d %H:%M UTC"),
        "title": untrusted(commit.title, TITLE_CHARS),
        "body": untrusted(commit.body, int(BODY_CHARS * text_share)),
        "pr_number": commit.pr_number or "",
        "pr_body": untrusted(pr_body, int(PR_BODY_CHARS * text_share)),
        "revert_target": revert_target(commit, reverted),
        "files_total": files_changed,
        "additions": additions,
        "deletions": deletions,
        "files_summary": files_summary(files, files_listed),
        "left_out": left_out_list(selection, left_out_listed),
        "redactions": sum(withheld(commit, pr_body, selection).values()) if selection else 0,
        "diff": (defang(selection.text) or NO_DIFF) if selection else "",
    }


class Analyzer:
    def __init__(self, llm: LLM | None, prompts: Prompts, settings):
        self.llm = llm
        self.prompts = prompts
        self.settings = settings

    def tag(self, lang: str) -> str:
        """What produces this analyzer's results — part of the analysis cache key."""
        if self.llm is None:
            return f"offline:{offline_version()}"
        return f"{self.llm.model}:{self.prompts.hash(JOB, lang)}"

    async def analyse(self, commit: Commit, files: Sequence[FileChange], lang: str, *,
                      pr_body: str | None = None, reverted: Commit | None = None) -> Analysis:
        if self.llm is None:
            selection = select_diff(files, self.settings.llm_max_prompt_tokens)
            return self._offline(commit, files, lang, selection)
        prompt, selection = self._prompt(commit, files, lang, pr_body, reverted)
        record_redactions(withheld(commit, pr_body, selection))
        try:
            analysis = await self._ask(prompt, lang)
        except LLMError as exc:
            return self._offline(commit, files, lang, selection, note=f"LLM unavailable: {exc}")
        except InvalidAnswer as exc:
            return self._offline(commit, files, lang, selection, note=str(exc))
        return self._attach(analysis, commit, files, selection, origin="llm", model=self.llm.model)

    # --- LLM path -----------------------------------------------------------------------------
    def _prompt(self, commit, files, lang, pr_body, reverted) -> tuple[RenderedPrompt, DiffSelection]:
        """The rendered prompt with as much diff as fits in llm_max_prompt_tokens. Lists and
        texts shrink step by step when a small budget cannot hold them (a 500-file commit)."""
        limit = self.settings.llm_max_prompt_tokens
        for shrink in SHRINK_STEPS:
            def render(selection: DiffSelection | None) -> RenderedPrompt:
                variables = prompt_variables(commit, files, pr_body=pr_body, reverted=reverted,
                                             selection=selection, shrink=shrink)
                return self.prompts.render(JOB, lang, **variables)

            budget = limit - _tokens(render(None)) - PROMPT_MARGIN_TOKENS
            selection = select_diff(files, max(budget, 0))
            prompt = render(selection)
            excess = _tokens(prompt) + PROMPT_MARGIN_TOKENS - limit
            if excess > 0 and selection.tokens:  # the list of left-out files took the room: trim once
                selection = select_diff(files, max(budget - excess, 0))
                prompt = render(selection)
            if _tokens(prompt) + PROMPT_MARGIN_TOKENS <= limit:
                break
        return prompt, selection

    async def _ask(self, prompt: RenderedPrompt, lang: str) -> Analysis:
        """The validated answer, after at most one corrective retry; InvalidAnswer otherwise."""
        messages = prompt.messages()
        first = await self._attempt(messages)
        if isinstance(first, Analysis):
            return first
        log.info("LLM answer rejected (%s); retrying once", first.en)
        retry = messages + [{"role": "user", "content": RETRY_FEEDBACK[_lang(lang)].format(
            problem=first.text(lang))}]
        second = await self._attempt(retry)
        if isinstance(second, Analysis):
            return second
        if second.cut_off:
            raise InvalidAnswer("LLM answer was cut off twice" if first.cut_off
                                else "LLM answer was cut off on the retry")
        raise InvalidAnswer(f"LLM answer failed validation: {second.reason}")

    async def _attempt(self, messages: list[dict[str, str]]) -> "Analysis | _Problem":
        completion = await self.llm.complete(messages, max_tokens=self.settings.llm_max_output_tokens)
        if completion.finish_reason == "length":
            return _Problem(cut_off=True)
        try:
            return validate_answer(parse_answer(completion.text))
        except InvalidAnswer as exc:
            return _Problem(reason=str(exc))

    # --- results ------------------------------------------------------------------------------
    def _offline(self, commit, files, lang, selection: DiffSelection, note: str = "") -> Analysis:
        origin = "fallback" if note else "offline"
        if note:
            log.warning("%s %s: offline analysis instead (%s)", commit.repo, commit.short_sha, note)
        result = heuristic.analyse_offline(commit, files, lang, coverage=selection.coverage,
                                           origin=origin, note=note)
        return self._attach(result, commit, files, selection, origin=origin, model=result.model)

    @staticmethod
    def _attach(analysis: Analysis, commit, files, selection: DiffSelection, *, origin: str,
                model: str) -> Analysis:
        files_changed, additions, deletions = totals(commit, files)
        return replace(analysis, origin=origin, model=model, coverage=selection.coverage,
                       files_changed=files_changed, additions=additions, deletions=deletions)


class _Problem:
    """Why an answer was rejected, for the retry message (in the prompt's language) and the note."""

    def __init__(self, *, cut_off: bool = False, reason: str = ""):
        self.cut_off = cut_off
        self.reason = reason

    @property
    def en(self) -> str:
        return "cut off at the output limit" if self.cut_off else self.reason

    def text(self, lang: str) -> str:
        lang = _lang(lang)
        if self.cut_off:
            return PROBLEM_CUT_OFF[lang]
        return PROBLEM_INVALID[lang].format(reason=self.reason)


def offline_version() -> str:
    """The heuristic's rule-set version (cache keys change when the rules do)."""
    return heuristic.HEURISTIC_VERSION


def _tokens(prompt: RenderedPrompt) -> int:
    return estimate_tokens(prompt.system) + estimate_tokens(prompt.user)


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"


__all__ = ["Analyzer", "InvalidAnswer", "defang", "parse_answer", "validate_answer",
           "prompt_variables", "offline_version", "DATA_TAGS"]
