"""One commit → one `Analysis`: through the LLM when there is one, else the offline rules.

The LLM path renders `prompts/analyze_commit.{lang}.j2` with the commit's text and as much diff
as the prompt budget allows, asks for one JSON object, validates it against one schema, and
retries exactly once (saying what was wrong: `prompts/analyze_retry.{lang}.j2`) when the answer
was cut off or invalid. A second failure, an answer still blank after the client's re-asks, or an
unreachable endpoint, falls back to the offline analysis marked "fallback" with a note saying why
(the catalogue's [llm_path], in the digest's language) — a digest never loses a commit and never
shows a half-parsed answer.

Everything taken from the repository (messages, PR text, paths, the diff) is untrusted data:
it goes inside tagged blocks, and any of our block tags inside it is defanged first, so a commit
cannot close its block and talk to the model as if it were us.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from settings import Settings

from ..core import metrics
from ..core.models import Analysis, Commit, Coverage, FileChange, Judgement
from ..core.prompts import Prompts, RenderedPrompt
from ..diffs.packing import DiffSelection, rules_coverage, select_diff
from ..diffs.tokens import estimate_tokens
from ..i18n import LANGS, localize, phrase
from ..i18n import text as catalogue_text
from ..redact import record as record_redactions
from ..redact import redact, redact_text
from . import hints
from .answer_schema import SCHEMA_NAME, InvalidAnswer, check_meaning, parse_answer, validate_answer
from .llm.client import LLM
from .llm.endpoint import ANALYSIS_OUTPUT_TOKENS, CONTEXT_RETRIES
from .llm.responses import ContextLengthError, LLMError
from .offline import RULES_VERSION, analyse_offline_langs
from .offline.context import Context
from .offline.decide import Verdict
from .prompt_text import DATA_TAGS, clip, defang, strip_bot_footers
from .repo_config import RepoProfile
from .texts import TRANSLATIONS, check_texts, joint_schema, with_texts
from .translate import Translator

log = logging.getLogger(__name__)

JOB = "analyze_commit"
RETRY_JOB = "analyze_retry"  # the corrective message after a rejected answer
# Room kept free in the prompt for the retry's feedback message and the estimate's error.
PROMPT_MARGIN_TOKENS = 300
BODY_CHARS = 4000  # a commit message beyond this is squash noise, not signal
PR_BODY_CHARS = 3000
TITLE_CHARS = 300
FILES_LISTED = 60  # the per-file summary lists the biggest files, then counts the rest
LEFT_OUT_LISTED = 40
TRIMS = 4  # times the diff is trimmed to fit at one shrink step
# When a small budget cannot hold the full lists next to a useful diff, the prompt shrinks in
# these steps: (files listed, left-out files listed, share of message/PR text kept).
SHRINK_STEPS = ((FILES_LISTED, LEFT_OUT_LISTED, 1.0), (25, 15, 1.0), (10, 5, 0.5), (0, 0, 0.25))
# What the model reads in an empty <diff> or <files> block: a marker of missing data, the same in
# both languages' prompts (not part of a template: the template's hash keys the cached analyses).
NO_DIFF = "(no diff available)"
NO_FILES = "(no file list available)"

# The blocks holding the commit's own text: an answer may quote them; it may not copy the rest of
# the prompt (instructions, placeholders, the offline hint) — see our_text().
COMMIT_BLOCKS = ("commit", "pr_description", "reverted_commit", "changelog", "files", "files_left_out", "diff")
_COMMIT_BLOCK = re.compile(r"<(%s)>.*?</\1>" % "|".join(COMMIT_BLOCKS), re.S)


# --- untrusted text ----------------------------------------------------------------------------


def untrusted(text: str | None, limit: int) -> str:
    """Repository text made safe for a data block: clipped, secrets redacted, tags defanged."""
    return defang(redact_text(clip(text or "", limit)))


def our_text(prompt: RenderedPrompt) -> str:
    """The prompt as we wrote it: the system part, and the user part without the commit's own
    blocks (inside them every tag is defanged, so a block ends only at its real closing tag)."""
    return f"{prompt.system}\n{_COMMIT_BLOCK.sub(' ', prompt.user)}"


def withheld(commit: Commit, pr_body: str | None, selection: DiffSelection | None) -> Counter:
    """Secrets kept out of this commit's prompt, by kind: its texts' and its diff's."""
    kinds: Counter = Counter(dict(selection.kinds)) if selection else Counter()
    for text in (commit.author, commit.title, commit.body, pr_body):
        kinds.update(redact(text).kinds)
    return kinds


# --- answer validation: bot/analysis/answer_schema.py (one definition → schema and checks) -----------

ANSWER_KEYS = ("change_type", "summary")  # an object with one of these is the answer, not a draft


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
        lines.append(f"… {len(rest)} more files (+{sum(f.additions for f in rest)} -{sum(f.deletions for f in rest)})")
    return defang(redact_text("\n".join(lines))) or NO_FILES


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


def prompt_variables(
    commit: Commit,
    files: Sequence[FileChange],
    *,
    lang: str = "en",
    pr_body: str | None,
    reverted: Commit | None,
    selection: DiffSelection | None,
    shrink: tuple[int, int, float] = SHRINK_STEPS[0],
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
    memo: dict[Any, Any] | None = None,
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything analyze_commit.*.j2 needs; `selection=None` renders it without a diff (to
    measure how much room the diff has); `shrink` is one of SHRINK_STEPS; `also`, the other
    languages whose texts the answer carries under `translations` (bot/analysis/texts.py). `memo`: a dict kept
    across the renders of one commit's prompt (same commit, files, texts, language, profile), so
    what does not depend on the selection or the shrink step — the rules' hint, the redacted
    texts — is computed once, not once per render."""
    memo = {} if memo is None else memo

    def once(key: Any, make: Any) -> Any:
        if key not in memo:
            memo[key] = make()
        return memo[key]

    files_changed, additions, deletions = totals(commit, files)
    files_listed, left_out_listed, text_share = shrink
    body = once("body", lambda: strip_bot_footers(commit.body))
    # a squash merge repeats the PR text: sent once
    pr_text = once("pr_text", lambda: hints.pr_text_for_prompt(body, pr_body))
    # the rules' reading of the commit (its parsed title is the changelog's too)
    parsed = _rules_reading(memo, commit, files, profile, judgement)[0].title
    return {
        "repo": defang(commit.repo),
        "short_sha": commit.short_sha,
        "author": once("author", lambda: untrusted(commit.author, 200)),
        "committed_at": commit.committed_at.strftime("%Y-%m-%d %H:%M UTC"),
        "title": once("title", lambda: untrusted(commit.title, TITLE_CHARS)),
        "body": once(("body", text_share), lambda: untrusted(body, int(BODY_CHARS * text_share))),
        "pr_number": commit.pr_number or "",
        "pr_body": once(("pr_body", text_share), lambda: untrusted(pr_text, int(PR_BODY_CHARS * text_share))),
        # In the digest's language: a model that copies it copies it word for word, which the
        # checks see (a hint in English was translated into a Chinese reason, unseen).
        "offline_hint": once(
            "offline_hint",
            lambda: defang(
                hints.offline_hint(
                    commit,
                    files,
                    profile,
                    judgement,
                    lang,
                    reading=_rules_reading(memo, commit, files, profile, judgement),
                )
            ),
        ),
        "taste": once("taste", lambda: untrusted(hints.taste_hint(judgement), PR_BODY_CHARS)),
        "profile": once("profile", lambda: defang((profile or RepoProfile.inferred()).describe())),
        "changelog": once(
            ("changelog", text_share),
            lambda: untrusted(hints.changelog_hunk(commit, files, parsed), int(PR_BODY_CHARS * text_share)),
        ),
        "revert_target": once("revert_target", lambda: revert_target(commit, reverted)),
        "files_total": files_changed,
        "additions": additions,
        "deletions": deletions,
        "files_summary": once(("files_summary", files_listed), lambda: files_summary(files, files_listed)),
        "left_out": left_out_list(selection, left_out_listed),
        "redactions": sum(_withheld(commit, pr_body, selection, memo).values()) if selection else 0,
        "diff": (defang(selection.text) or NO_DIFF) if selection else "",
        "also": list(also),
    }


def _rules_reading(
    memo: dict, commit: Commit, files: Sequence[FileChange], profile: RepoProfile | None, judgement: Judgement | None
) -> tuple[Context, Verdict]:
    """The rules' reading of the commit (hints.rules_reading), once an analysis: the prompt's hint
    says it, and the offline analysis standing in for a failed LLM answer starts from it."""
    if "rules_reading" not in memo:
        memo["rules_reading"] = hints.rules_reading(commit, files, profile, judgement)
    return memo["rules_reading"]


def _withheld(commit: Commit, pr_body: str | None, selection: DiffSelection | None, memo: dict) -> Counter:
    """`withheld`, with the commit texts' part (the same for every selection) remembered in `memo`."""
    if "text_kinds" not in memo:
        memo["text_kinds"] = withheld(commit, pr_body, None)
    kinds: Counter = Counter(dict(selection.kinds)) if selection else Counter()
    kinds.update(memo["text_kinds"])
    return kinds


class Analyzer:
    def __init__(self, llm: LLM | None, prompts: Prompts, settings: Settings):
        self.llm = llm
        self.prompts = prompts
        self.settings = settings
        self.translator = Translator(llm, prompts) if llm is not None else None

    def tag(self, lang: str = "") -> str:
        """What produces this analyzer's results — part of the analysis cache key. The same in
        every language: a commit's analyses in zh and en are one analysis (its level, its type),
        its texts written in each (bot/analysis/texts.py); the key then names the language."""
        if self.llm is None:
            return f"offline:{offline_version()}"
        # The endpoint too: two servers may serve one model name (a quantised copy, another
        # window), and one's answers — or its failures — are not the other's.
        prompts = "".join(self.prompts.hash(JOB, code)[:6] for code in LANGS)
        return f"{self.llm.model}@{self.llm.endpoint_id}:{prompts}"

    async def analyse(
        self,
        commit: Commit,
        files: Sequence[FileChange],
        lang: str,
        *,
        pr_body: str | None = None,
        reverted: Commit | None = None,
        profile: RepoProfile | None = None,
        judgement: Judgement | None = None,
    ) -> Analysis:
        """`judgement`: the repository's learned profile on this commit (bot/taste), weighed by the
        rules (and so shown to the LLM in the rules' hint) when there is one."""
        made = await self.analyse_langs(
            commit, files, (lang,), pr_body=pr_body, reverted=reverted, profile=profile, judgement=judgement
        )
        return made[lang]

    async def analyse_langs(
        self,
        commit: Commit,
        files: Sequence[FileChange],
        langs: Sequence[str],
        *,
        pr_body: str | None = None,
        reverted: Commit | None = None,
        profile: RepoProfile | None = None,
        judgement: Judgement | None = None,
    ) -> dict[str, Analysis]:
        """One analysis of the commit, its texts in each of `langs` (the first is the prompt's):
        language → Analysis, the level and type the same in all. With an LLM, one request whose
        answer carries the other languages' texts under `translations`; a language whose texts
        are missing or fail the checks is left out (the caller translates it later). Offline,
        every language the bot speaks (the facts are nine tenths of the work: bench/bench_languages.py)."""
        langs = list(dict.fromkeys(langs))
        if self.llm is None:
            every = [*langs, *(code for code in LANGS if code not in langs)]
            # the rules are CPU: a worker thread's, as the prompt is
            return await asyncio.to_thread(self._offline, commit, files, every, profile=profile, judgement=judgement)
        lang, also = langs[0], langs[1:]
        subject = _Subject(commit, files, lang, also)
        await self.llm.recall()  # the window and the tokens ratio an earlier process learnt
        memo: dict[Any, Any] = {}  # what the renders of this commit's prompt share
        # Building the prompt is CPU (redaction, the rules' hint, fitting the diff): a worker
        # thread's, never the event loop's that acknowledges requests meanwhile.
        prompt, selection = await asyncio.to_thread(
            self._prompt, commit, files, lang, pr_body, reverted, profile, judgement, memo, also
        )
        record_redactions(_withheld(commit, pr_body, selection, memo))
        try:
            for refused in range(CONTEXT_RETRIES + 1):
                try:
                    answer = await self._ask(prompt, lang, subject)
                    break
                except ContextLengthError as exc:
                    if refused == CONTEXT_RETRIES:
                        raise
                    # The endpoint told us its window; the estimate is corrected: shrink, ask again.
                    log.info("%s %s: %s Asking again with a smaller diff.", commit.repo, commit.short_sha, exc)
                    prompt, selection = await asyncio.to_thread(
                        self._prompt, commit, files, lang, pr_body, reverted, profile, judgement, memo, also
                    )
        except LLMError as exc:
            metrics.count("llm_fallbacks", reason=exc.kind)
            start = memo.get("rules_reading")  # the rules read the commit for the prompt's hint already
            if exc.kind == "budget":  # the month's tokens are spent: the rules, said once by the digest
                return self._offline(
                    commit, files, langs, reason="budget", profile=profile, judgement=judgement, start=start
                )
            error = exc

            def unavailable(code: str) -> str:
                return catalogue_text(code, "llm_path.unavailable", error=localize(error, code))

            return self._offline(
                commit,
                files,
                langs,
                note=unavailable,
                reason=exc.kind,
                profile=profile,
                judgement=judgement,
                start=start,
            )
        except InvalidAnswer as exc:
            metrics.count("llm_fallbacks", reason="rejected")
            rejected = exc
            return self._offline(
                commit,
                files,
                langs,
                note=lambda code: localize(rejected, code),
                reason="rejected",
                profile=profile,
                judgement=judgement,
                start=memo.get("rules_reading"),
            )
        # Provenance: the coverage is the selection the model was given (after any shrinking).
        return {
            code: self._attach(made, commit, files, selection.coverage, origin="llm", model=self.llm.model)
            for code, made in {lang: answer.analysis, **answer.others}.items()
        }

    async def translate(self, analysis: Analysis, commit: Commit, lang: str) -> Analysis:
        """`analysis` (made in another language) with its texts in `lang`, everything else kept:
        the cheap path for a language asked after the analysis (bot/analysis/translate.py).
        InvalidAnswer or LLMError when no checked translation could be had."""
        if self.llm is None or self.translator is None:
            raise InvalidAnswer(phrase("llm_path.translation_missing"), "translation")
        await self.llm.recall()
        return await self.translator.translate(analysis, commit, lang)

    async def translate_lines(self, lines: Sequence[str], title: str, lang: str) -> list[str]:
        """Short lines (a digest's headline) in `lang`, sent with the digest's analyses'
        translations (or at `flush_translations`)."""
        if self.llm is None or self.translator is None:
            raise InvalidAnswer(phrase("llm_path.translation_missing"), "translation")
        await self.llm.recall()
        return await self.translator.translate_lines(lines, title, lang, wait=True)

    def flush_translations(self, lang: str) -> None:
        """Send the translations into `lang` still waiting (a digest's analyses are all made)."""
        if self.translator is not None:
            self.translator.flush(lang)

    # --- LLM path -----------------------------------------------------------------------------
    def _prompt(
        self, commit, files, lang, pr_body, reverted, profile=None, judgement=None, memo=None, also=()
    ) -> tuple[RenderedPrompt, DiffSelection]:
        """The rendered prompt with as much diff as fits the endpoint's prompt budget (the
        setting, or less when the model's window is known — and room kept for every language's
        texts). Lists and texts shrink step by step when a small budget cannot hold them (a
        500-file commit)."""
        assert self.llm is not None  # the LLM path: analyse() went offline without one
        limit = self.llm.max_prompt_tokens
        if also:
            limit = self.llm.prompt_budget(ANALYSIS_OUTPUT_TOKENS * (1 + len(also)))
        memo = {} if memo is None else memo
        for shrink in SHRINK_STEPS:

            def render(selection: DiffSelection | None, shrink: tuple[int, int, float] = shrink) -> RenderedPrompt:
                variables = prompt_variables(
                    commit,
                    files,
                    lang=lang,
                    pr_body=pr_body,
                    reverted=reverted,
                    selection=selection,
                    shrink=shrink,
                    profile=profile,
                    judgement=judgement,
                    memo=memo,
                    also=also,
                )
                return self.prompts.render(JOB, lang, **variables)

            budget = limit - _tokens(render(None)) - PROMPT_MARGIN_TOKENS
            selection = select_diff(files, max(budget, 0), cache=memo)
            prompt = render(selection)
            # The notes of what the diff leaves out grow as it shrinks: trimmed once, a 13-file
            # commit 26 tokens over fell to the last step (no file listed, a quarter of the message).
            for _trim in range(TRIMS):
                excess = _tokens(prompt) + PROMPT_MARGIN_TOKENS - limit
                if excess <= 0 or not selection.tokens:
                    break
                budget = min(budget, selection.tokens) - excess  # what was shown, less the excess
                selection = select_diff(files, max(budget, 0), cache=memo)
                prompt = render(selection)
            if _tokens(prompt) + PROMPT_MARGIN_TOKENS <= limit:
                break
        return prompt, selection

    async def _ask(self, prompt: RenderedPrompt, lang: str, subject: _Subject) -> _Answer:
        """The checked answer, after at most one corrective retry; InvalidAnswer otherwise."""
        messages = prompt.messages()
        first = await self._attempt(messages, prompt, subject)
        if isinstance(first, _Answer):
            return first
        if first.code == "empty":  # still blank after the client's re-asks: no corrective retry helps
            raise InvalidAnswer(phrase("llm_path.blank_every_time"), "empty")
        log.info(
            "LLM answer rejected (%s); retrying once", "cut off at the output limit" if first.cut_off else first.reason
        )
        # The checks' reason is told in English in either language's corrective message.
        feedback = self.prompts.render(RETRY_JOB, _lang(lang), cut_off=first.cut_off, reason=str(first.reason))
        second = await self._attempt(messages + [{"role": "user", "content": feedback.user}], prompt, subject)
        if isinstance(second, _Answer):
            return second
        if second.cut_off:
            raise InvalidAnswer(
                phrase("llm_path.cut_off_twice" if first.cut_off else "llm_path.cut_off_on_retry"), "cut_off"
            )
        raise InvalidAnswer(phrase("llm_path.failed_validation", reason=second.reason), second.code)

    async def _attempt(
        self, messages: list[dict[str, str]], prompt: RenderedPrompt, subject: _Subject
    ) -> _Answer | _Problem:
        assert self.llm is not None  # the LLM path: analyse() went offline without one
        completion = await self.llm.complete(
            messages,
            max_tokens=self.llm.max_output_tokens,
            schema=joint_schema(subject.also),
            schema_name=SCHEMA_NAME,
        )
        if completion.finish_reason == "length":
            metrics.count("llm_rejections", reason="cut_off")
            return _Problem(cut_off=True)
        try:
            if not completion.text.strip():  # DeepSeek blanks an answer that was not JSON
                raise InvalidAnswer(phrase("llm_path.answer_empty"), "empty")
            data = parse_answer(completion.text, expect=ANSWER_KEYS)
            analysis = validate_answer(data)
            ours = our_text(prompt)
            check_meaning(analysis, subject.commit, subject.files, ours, subject.lang)
        except InvalidAnswer as exc:
            metrics.count("llm_rejections", reason=exc.code)
            return _Problem(reason=exc.args[0], code=exc.code)  # the phrase: told again in the note
        return _Answer(analysis, self._others(data, analysis, subject, ours))

    @staticmethod
    def _others(data: dict, analysis: Analysis, subject: _Subject, ours: str) -> dict[str, Analysis]:
        """The other languages' texts of a checked answer, each checked on its own: one that
        fails is left out (translated later), never a reason to reject the analysis."""
        found: dict[str, Analysis] = {}
        given = data.get(TRANSLATIONS)
        for code in subject.also:
            # a model that puts a language's texts at the top level is understood too
            texts = given.get(code) if isinstance(given, dict) else data.get(code)
            try:
                other = with_texts(analysis, texts)
                check_texts(other, subject.commit, ours, code)
            except InvalidAnswer as exc:
                metrics.count("llm_rejections", reason="translation")
                log.info("%s: the answer's %s texts were left out (%s)", subject.commit.short_sha, code, exc)
                continue
            found[code] = other
        return found

    # --- results ------------------------------------------------------------------------------
    def _offline(
        self,
        commit,
        files,
        langs: Sequence[str],
        note: Callable[[str], str] | None = None,
        reason: str = "",
        profile: RepoProfile | None = None,
        judgement: Judgement | None = None,
        start: tuple[Context, Verdict] | None = None,
    ) -> dict[str, Analysis]:
        """The rule-based analysis in each of `langs`; with a `note` (each language's), a
        visible fallback. Its coverage is what the rules read, not what an LLM prompt would
        have held. `start`: the rules' reading the prompt's hint made (read once)."""
        origin = "fallback" if note else "offline"
        notes = {code: note(code) for code in langs} if note else {}
        if notes:
            log.warning("%s %s: offline analysis instead (%s)", commit.repo, commit.short_sha, notes[langs[0]])
        coverage = rules_coverage(files)
        made = analyse_offline_langs(
            commit,
            files,
            langs,
            coverage=coverage,
            origin=origin,
            notes=notes,
            profile=profile,
            judgement=judgement,
            start=start,
        )
        return {
            code: self._attach(
                replace(result, fallback_reason=reason), commit, files, coverage, origin=origin, model=result.model
            )
            for code, result in made.items()
        }

    @staticmethod
    def _attach(analysis: Analysis, commit, files, coverage: Coverage, *, origin: str, model: str) -> Analysis:
        files_changed, additions, deletions = totals(commit, files)
        return replace(
            analysis,
            origin=origin,
            model=model,
            coverage=coverage,
            files_changed=files_changed,
            additions=additions,
            deletions=deletions,
        )


class _Subject:
    """The commit an answer must be about (for the meaning checks)."""

    def __init__(self, commit: Commit, files: Sequence[FileChange], lang: str, also: Sequence[str] = ()):
        self.commit = commit
        self.files = files
        self.lang = lang  # every text of the answer is in the digest's language…
        self.also = tuple(also)  # …and those under `translations` in these


@dataclass
class _Answer:
    """A checked answer: the analysis in the prompt's language, and the other languages' texts
    that passed their checks."""

    analysis: Analysis
    others: dict[str, Analysis] = field(default_factory=dict)


class _Problem:
    """Why an answer was rejected, for the retry message (analyze_retry.{lang}.j2) and the note."""

    def __init__(self, *, cut_off: bool = False, reason: str = "", code: str = ""):
        self.cut_off = cut_off
        self.reason = reason  # a catalogue phrase (English as a str)
        self.code = code or ("cut_off" if cut_off else "schema")


def offline_version() -> str:
    """The offline analyser's rule-set version (cache keys change when the rules do)."""
    return RULES_VERSION


def _tokens(prompt: RenderedPrompt) -> int:
    return estimate_tokens(prompt.system) + estimate_tokens(prompt.user)


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"


__all__ = [
    "Analyzer",
    "InvalidAnswer",
    "defang",
    "parse_answer",
    "validate_answer",
    "prompt_variables",
    "offline_version",
    "DATA_TAGS",
]
