"""A language asked after a commit was analysed (a channel in English reading a repository the
Chinese channels had analysed, the CLI's `--lang en` after zh): the analysis's texts translated,
not the commit analysed again — the level, the type and everything else kept.

The texts of many commits go in one request (`prompts/translate_analysis.{lang}.j2`): a digest
asks for its commits' translations at once (its bounded pool), and the requests that arrive
within LINGER seconds of each other are batched, up to BATCH_ENTRIES commits and BATCH_TOKENS of
source text (the answer has to hold them all again). What comes back is checked as an answer's
texts are (bot/analysis/texts.py); the entries that fail are asked once more, together; what
still fails raises InvalidAnswer to its caller, which then analyses that commit in full.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import metrics
from ..core.models import Analysis, Commit
from ..core.prompts import Prompts, RenderedPrompt
from ..diffs.tokens import estimate_tokens
from ..i18n import phrase
from .answer_schema import InvalidAnswer, language_problem, parse_answer
from .language import wrong_language
from .llm.client import LLM
from .prompt_text import clip, defang
from .texts import check_texts, flat_texts, from_flat

log = logging.getLogger(__name__)

JOB = "translate_analysis"
SCHEMA_NAME = "analysis_translations"
BATCH_ENTRIES = 16  # commits per request: a few requests a digest, answers well inside the output cap
LINGER = 0.05  # seconds a first request waits for the others of its digest
TITLE_CHARS = 200
_BLOCK = re.compile(r"<analyses>.*?</analyses>", re.S)


def batch_schema() -> dict[str, Any]:
    """{"entries": [{"id", "texts": [...]}]}, strict-mode shaped."""
    entry = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "texts": {"type": "array", "items": {"type": "string"}}},
        "required": ["id", "texts"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"entries": {"type": "array", "items": entry}},
        "required": ["entries"],
        "additionalProperties": False,
    }


@dataclass
class _Wanted:
    texts: list[str]
    title: str  # what the texts are about (a commit's title), for the translator's context
    finish: Callable[[list[str], str], Any]  # (the translated texts, our prompt's text) → the result, or InvalidAnswer
    future: asyncio.Future = field(repr=False)


class Translator:
    """Batches translation requests per target language (see the module doc)."""

    def __init__(self, llm: LLM, prompts: Prompts, *, batch: int = BATCH_ENTRIES, linger: float = LINGER):
        self.llm = llm
        self.prompts = prompts
        self.batch = batch
        self.linger = linger
        self._waiting: dict[str, list[_Wanted]] = {}
        self._timers: dict[str, asyncio.Task] = {}

    async def translate(self, base: Analysis, commit: Commit, lang: str) -> Analysis:
        """`base` (an analysis in another language) with its texts in `lang`; InvalidAnswer
        or LLMError when no checked translation could be had."""

        def finish(texts: list[str], ours: str) -> Analysis:
            result = from_flat(base, texts)
            check_texts(result, commit, ours, lang)
            return result

        return await self._submit(lang, flat_texts(base), commit.title, finish)

    async def translate_lines(self, lines: Sequence[str], title: str, lang: str, *, wait: bool = False) -> list[str]:
        """Short lines (a digest's headline bullets) in `lang`, one for one, each checked to be
        in that language; InvalidAnswer or LLMError otherwise. `wait`: sent with the next batch
        (the digest's analyses, asked for a little later), or at `flush(lang)`."""

        def finish(texts: list[str], ours: str) -> list[str]:
            if len(texts) != len(lines) or not all(isinstance(t, str) and t.strip() for t in texts):
                raise InvalidAnswer(phrase("llm_path.translation_count", n=len(lines), got=len(texts)), "translation")
            if any(wrong_language(t, lang) for t in texts):
                raise InvalidAnswer(language_problem("texts", lang), "wrong_language")
            return [t.strip() for t in texts]

        return await self._submit(lang, list(lines), title, finish, start=not wait)

    def flush(self, lang: str) -> None:
        """Send what waits for `lang` (after the linger), if anything does."""
        if self._waiting.get(lang) and lang not in self._timers:
            self._timers[lang] = asyncio.ensure_future(self._flush(lang))

    async def _submit(self, lang: str, texts: list[str], title: str, finish, start: bool = True) -> Any:
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(lang, []).append(_Wanted(texts, title, finish, future))
        if start:
            self.flush(lang)
        return await future

    async def _flush(self, lang: str) -> None:
        try:
            await asyncio.sleep(self.linger)
        finally:
            self._timers.pop(lang, None)
            wanted = [w for w in self._waiting.pop(lang, []) if not w.future.done()]  # not those given up
        await asyncio.gather(*(self._run(lang, part, again=True) for part in self._batches(wanted)))

    def _batches(self, wanted: list[_Wanted]) -> list[list[_Wanted]]:
        """Up to `batch` entries and three quarters of the output cap of source text each (a
        translation is about as long as its source, counted as tokens; an answer cut off all the
        same is asked again in halves)."""
        budget = max(256, self.llm.max_output_tokens * 3 // 4)
        out: list[list[_Wanted]] = []
        size = 0
        for w in wanted:
            tokens = sum(estimate_tokens(t) for t in w.texts) + 8
            if not out or len(out[-1]) >= self.batch or (size + tokens > budget and out[-1]):
                out.append([])
                size = 0
            out[-1].append(w)
            size += tokens
        return out

    async def _run(self, lang: str, batch: list[_Wanted], *, again: bool) -> None:
        try:
            answered, prompt, cut_off = await self._ask(lang, batch)
        except Exception as exc:  # noqa: BLE001 — the endpoint failed (LLMError) or worse: every waiter hears it
            for w in batch:
                if not w.future.done():
                    w.future.set_exception(exc)
            return
        if cut_off and len(batch) > 1:  # too much for one answer: halves, each asked again
            half = len(batch) // 2
            await asyncio.gather(self._run(lang, batch[:half], again=again), self._run(lang, batch[half:], again=again))
            return
        failed: list[tuple[_Wanted, InvalidAnswer]] = []
        ours = _our_text(prompt)
        for n, w in enumerate(batch, 1):
            if w.future.done():  # its caller gave up (cancelled)
                continue
            try:
                texts = answered.get(str(n))
                if texts is None:
                    raise InvalidAnswer(phrase("llm_path.translation_missing"), "translation")
                w.future.set_result(w.finish(texts, ours))
            except InvalidAnswer as rejected:
                metrics.count("llm_rejections", reason="translation")
                failed.append((w, rejected))
        if not failed:
            return
        if again:  # asked once more, together
            log.info("%d translations into %s rejected; asking once more", len(failed), lang)
            await self._run(lang, [w for w, _ in failed], again=False)
            return
        for w, why in failed:
            w.future.set_exception(why)

    async def _ask(self, lang: str, batch: Sequence[_Wanted]) -> tuple[dict[str, list], RenderedPrompt, bool]:
        """(entry id → its texts, the prompt, cut off?) for one request."""
        lines = [
            json.dumps(
                {"id": str(n), "title": clip(w.title, TITLE_CHARS), "texts": w.texts},
                ensure_ascii=False,
            )
            for n, w in enumerate(batch, 1)
        ]
        prompt = self.prompts.render(JOB, _lang(lang), count=len(batch), entries=defang("\n".join(lines)))
        completion = await self.llm.complete(
            prompt.messages(), max_tokens=self.llm.max_output_tokens, schema=batch_schema(), schema_name=SCHEMA_NAME
        )
        if completion.finish_reason == "length":
            return {}, prompt, True
        try:
            data = parse_answer(completion.text, expect=("entries",))
        except InvalidAnswer:
            return {}, prompt, False  # every entry fails, and is asked again
        entries = data.get("entries")
        found: dict[str, list] = {}
        for item in entries if isinstance(entries, list) else []:
            if isinstance(item, dict) and isinstance(item.get("texts"), list):
                found.setdefault(str(item.get("id")).strip(), item["texts"])
        return found, prompt, False


def _our_text(prompt: RenderedPrompt) -> str:
    """The prompt as we wrote it: without the entries (which an answer translates, not copies)."""
    return f"{prompt.system}\n{_BLOCK.sub(' ', prompt.user)}"


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"
