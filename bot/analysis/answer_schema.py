"""The model's analysis answer: its one definition (→ JSON schema and validation), tolerant
extraction from whatever the model wrapped it in, and checks of its meaning.

Models met in the wild think aloud (`<think>…</think>` with draft JSON inside), wrap the object
in prose and fences, leave trailing commas and raw newlines, put the object in a list, copy the
prompt's placeholders back, or answer "y". Extraction takes the first complete JSON value after
the reasoning (a balanced scan, not first `{` to last `}`); the meaning checks reject what is
well-formed but says nothing about the commit.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.models import Analysis, ChangeType, Commit, FileChange, Importance, Insights
from ..i18n import phrase
from ..i18n import text as catalogue_text
from .language import wrong_language
from .reasoning import strip_reasoning

CHANGE_TYPES = tuple(t.value for t in ChangeType)
IMPORTANCES = tuple(i.value for i in Importance)
INSIGHT_KEYS = ("architecture", "performance", "security")


class InvalidAnswer(ValueError):
    """The model's answer is unusable; the message says how in a few words (a catalogue phrase:
    English where the model reads it, the reader's language in a fallback's note), `code` names
    the reason for the rejection counter."""

    def __init__(self, message: str, code: str = "schema"):
        super().__init__(message)
        self.code = code


# --- the one definition ------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerField:
    key: str
    kind: str  # "enum" | "text" | "texts" (list of strings) | "insights"
    required: bool = False  # required non-empty when validating
    values: tuple[str, ...] = ()


ANSWER_FIELDS = (
    AnswerField("change_type", "enum", True, CHANGE_TYPES),
    AnswerField("importance", "enum", True, IMPORTANCES),
    AnswerField("importance_reason", "text", True),
    AnswerField("summary", "text", True),
    AnswerField("impact", "text"),
    AnswerField("insights", "insights"),
    AnswerField("risks", "texts"),
    AnswerField("recommendations", "texts"),
)
SCHEMA_NAME = "commit_analysis"


def answer_schema() -> dict[str, Any]:
    """The JSON schema of the answer, generated from ANSWER_FIELDS. Strict-mode shaped (every
    key listed as required, no extra keys) because OpenAI's strict structured output demands it;
    emptiness of optional fields is allowed by the validator, not the schema."""

    def prop(f: AnswerField) -> dict[str, Any]:
        if f.kind == "enum":
            return {"type": "string", "enum": list(f.values)}
        if f.kind == "text":
            return {"type": "string"}
        if f.kind == "texts":
            return {"type": "array", "items": {"type": "string"}}
        return {
            "type": "object",
            "properties": {k: {"type": "string"} for k in INSIGHT_KEYS},
            "required": list(INSIGHT_KEYS),
            "additionalProperties": False,
        }

    return {
        "type": "object",
        "properties": {f.key: prop(f) for f in ANSWER_FIELDS},
        "required": [f.key for f in ANSWER_FIELDS],
        "additionalProperties": False,
    }


def validate_answer(data: dict[str, Any]) -> Analysis:
    """The answer as an Analysis, checked field by field against ANSWER_FIELDS."""
    values = {f.key: _field(data, f) for f in ANSWER_FIELDS}
    return Analysis(
        change_type=ChangeType(values["change_type"]),
        importance=Importance(values["importance"]),
        importance_reason=values["importance_reason"],
        summary=values["summary"],
        impact=values["impact"],
        insights=values["insights"],
        risks=values["risks"],
        recommendations=values["recommendations"],
    )


# What models write for "nothing": `risks: ["None"]`, `"impact": "N/A"`, `"暂无"`. Read as empty in
# every field, so "None" is never published as a risk nor reaches the day's headline.
_NONE_EN = re.compile(
    r"^(?:(?:none|nothing|nil|null|n/?a|na|no|not applicable|not relevant)"
    r"(?:\s+(?:known|identified|noted|significant|notable|obvious|specific|apparent|expected|found|needed|"
    r"required|further|additional|other|more|particular|action|actions|at this time|so far|in particular))*"
    r"(?:\s+(?:risks?|recommendations?|impacts?|changes?|issues?|concerns?|insights?|follow-?ups?|steps?|"
    r"(?:architecture|architectural|performance|security)(?:\s+(?:impacts?|changes?|concerns?|implications?))?))?"
    r"(?:\s+(?:(?:are|is)\s+)?(?:known|identified|noted|found|needed|required|expected|necessary|at this time))*"
    r"|nothing (?:further |else |more )?to (?:add|report|recommend|note)|-+|—+|–+|/|\.{3}|…)$",
    re.I,
)
_NONE_ZH = re.compile(
    r"^(?:暂?无|没有|不适用|无需|不涉及|未发现)(?:明显|特别|已知|显著|重大|任何|具体|进一步|其他|其它|额外|更多)?的?"
    r"(?:风险|建议|影响|问题|变化|改动|后续|架构|性能|安全|操作|措施|行动)*(?:影响|问题|建议)?$"
)


def is_none_like(text: str) -> bool:
    """True for the ways a model says "nothing" ("None", "N/A", "No known risks", "无", "暂无风险")."""
    core = re.sub(r"^[\s\-*•·]+|[\s。.!！;；,，:：()（）\[\]\"'`]+$", "", text or "").strip()
    core = core.strip("\"'`()（）[]<>‹›《》「」").strip()  # `<无>`: the placeholder's brackets kept
    if not core:
        return True
    return bool(_NONE_EN.match(core) or _NONE_ZH.match(core.replace(" ", "")))


def _field(data: dict, f: AnswerField):
    value = data.get(f.key)
    if f.kind == "insights":
        if value is None:
            return Insights()
        if not isinstance(value, dict):
            raise InvalidAnswer(phrase("llm_path.insights_not_object"))
        return Insights(**{key: _text(value, key, False) for key in INSIGHT_KEYS})
    if f.kind == "texts":
        if value is None:
            return ()
        if isinstance(value, str):  # a single string is accepted as a one-item list
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidAnswer(phrase("llm_path.not_a_list", key=f.key))
        return tuple(v.strip() for v in value if v.strip() and not is_none_like(v))
    text = _text(data, f.key, f.required)
    if f.kind == "enum":
        text = text.lower()
        if text not in f.values:
            raise InvalidAnswer(phrase("llm_path.not_one_of", key=f.key, value=repr(text), values=", ".join(f.values)))
    return text


def _text(data: dict, key: str, required: bool) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, str) and is_none_like(value):
        value = ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidAnswer(phrase("llm_path.missing" if required else "llm_path.not_a_string", key=key))
    return value.strip()


# --- tolerant extraction -----------------------------------------------------------------------

_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*[}\]]")  # matched at a comma outside strings
MAX_CANDIDATES = 200  # bracket positions tried before giving up (a 16 KB answer has few)


def parse_answer(text: str, expect: Sequence[str] = ()) -> dict[str, Any]:
    """The answer's JSON object: the first complete one after the reasoning, in a fence or not,
    trailing commas and raw newlines forgiven, `[{…}]` unwrapped. With `expect`, an object that
    has one of those keys wins over an earlier one that has none (a draft in the prose)."""
    visible = strip_reasoning(text or "")
    found: list[dict] = []
    for part in [m.group(1) for m in _FENCED.finditer(visible)] + [visible]:
        for value in _json_values(part):
            if not expect or any(key in value for key in expect):
                return value
            found.append(value)
    if found:
        return found[0]
    raise InvalidAnswer(phrase("llm_path.not_json"), "not_json")


def _json_values(text: str):
    """Every JSON object (or one-object list) in `text`, in order, by balanced bracket scan."""
    tried = 0
    i = 0
    while i < len(text) and tried < MAX_CANDIDATES:
        if text[i] in "{[":
            tried += 1
            end = _closing(text, i)
            if end is not None:
                value = _loads(text[i : end + 1])
                if isinstance(value, list) and len(value) == 1:
                    value = value[0]
                if isinstance(value, dict):
                    yield value
                    i = end
        i += 1


def _outside_strings(text: str, start: int = 0):
    """(index, character) for every character from `start` that is not inside a JSON string
    (quotes themselves included), so bracket matching and comma clean-up never look into text."""
    in_string = escaped = False
    for j in range(start, len(text)):
        ch = text[j]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        yield j, ch


def _closing(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at `start`, skipping strings; None if unbalanced."""
    stack: list[str] = []
    for j, ch in _outside_strings(text, start):
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return j
    return None


def _loads(raw: str):
    """json.loads that forgives raw control characters in strings (strict=False) and, failing
    that, trailing commas outside strings."""
    try:
        return json.loads(raw, strict=False)
    except ValueError:
        pass
    try:
        return json.loads(_without_trailing_commas(raw), strict=False)
    except ValueError:
        return None


def _without_trailing_commas(raw: str) -> str:
    drop = {j for j, ch in _outside_strings(raw) if ch == "," and _TRAILING_COMMA.match(raw, j)}
    return "".join(ch for j, ch in enumerate(raw) if j not in drop)


# --- meaning -----------------------------------------------------------------------------------

_SLOT = re.compile(r"<([^<>\n]{2,80})>")
_WORD = re.compile(r"[A-Za-z0-9_]+")  # identifiers, numbers, SHAs (which may start with a digit)
_CJK = re.compile(r"[\u3400-\u9fff]")
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
GENERIC_WORDS = frozenset(
    """
a an the and or but for with from into onto of to in on at by as is are was were be been this that these
those it its their there here now also only more less some all any one two new old code file files commit
commits change changes changed changing update updates updated add adds added adding fix fixes fixed
fixing remove removes removed removing use uses used using make makes made support supports supported
improve improves improved minor small various misc feat chore docs doc test tests bug bugfix refactor
style perf build ci when which what why how not no yes via per after before then than so such other
summary analysis none null empty
""".split()
)
SAFE_TYPES_FOR_DOCS = frozenset({ChangeType.SECURITY})


def _slots(our_text: str) -> set[str]:
    """The prompt's placeholders (`<what changed and why>`), not its data tags (`<commit>`)."""
    return {
        n for n in map(_norm, _SLOT.findall(our_text)) if (len(n) >= 4 and _CJK.search(n)) or (" " in n and len(n) >= 8)
    }


def _copies(text: str, slots: set[str], prompt: str) -> bool:
    norm = _norm(text.strip())
    if not norm:
        return False
    if _SLOT.fullmatch(text.strip()) or any(slot in norm for slot in slots):
        return True
    long_enough = len(norm) >= 16 if _CJK.search(norm) else len(norm.split()) >= 4
    return long_enough and norm in prompt


def copies_prompt(text: str, our_text: str) -> bool:
    """True when `text` is a placeholder of the prompt or a run of its words (4+ words; 16+
    characters of Chinese) copied whole."""
    return _copies(text, _slots(our_text), _norm(our_text))


_HINT = re.compile(r"<offline_hint>\s*(high|medium|low) \([^)]*\): (.*?)\s*</offline_hint>", re.S)


def echoed_field(analysis: Analysis, our_text: str) -> str | None:
    """The first field that copies a placeholder, an instruction or the offline hint from the
    prompt (`our_text`: the prompt without the commit's own text, which a summary may quote).
    The hint's reason may stand as the importance reason when the answer agrees with the hint's
    level: it is then a true sentence in the reader's language (a small model copies it; what
    must not pass is the rules' reason under another level)."""
    slots, prompt = _slots(our_text), _norm(our_text)
    hint = _HINT.search(our_text)
    for key, value in _text_fields(analysis):
        if (
            key == "importance_reason"
            and hint is not None
            and analysis.importance.value == hint.group(1)
            and _norm(value)
            and _norm(value) in _norm(hint.group(2))
        ):
            continue
        if _copies(value, slots, prompt):
            return key
    return None


def summary_too_short(summary: str) -> bool:
    text = re.sub(r"[\W_]+", " ", summary).strip()
    if _CJK.search(text):
        return len(text.replace(" ", "")) < 4
    return len(text.split()) < 2


def commit_terms(commit: Commit, files: Sequence[FileChange]) -> set[str]:
    """Lower-case words that name something in the commit: title words, path parts, symbols on
    changed lines, the short SHA. Generic words ("fix", "code") are left out."""
    terms: set[str] = {commit.short_sha.lower()}
    terms |= _words(commit.title)
    for f in files:
        for path in filter(None, (f.path, f.previous_path)):
            terms |= _words(path.replace("/", " ").replace(".", " "))
        for line in (f.patch or "").splitlines():
            if line[:1] in "+-@" and not line.startswith(("+++", "---")):
                terms |= _words(line)
    return terms - GENERIC_WORDS


def _commit_terms_hit(said: set[str], commit: Commit, files: Sequence[FileChange]) -> set[str]:
    """The terms of `commit_terms` that `said` holds, read in its order (SHA and title, each
    file's path, its changed lines) and stopped at the first part that holds one: a summary
    usually names the commit by its title or a path, so most diffs are never split into words."""
    if said & {commit.short_sha.lower()}:
        return said & {commit.short_sha.lower()}
    found = said & _words(commit.title)  # `said` holds no generic word: no need to remove them here
    if found:
        return found
    for f in files:
        for path in filter(None, (f.path, f.previous_path)):
            found = said & _words(path.replace("/", " ").replace(".", " "))
            if found:
                return found
    for f in files:
        for line in (f.patch or "").splitlines():
            if line[:1] in "+-@" and not line.startswith(("+++", "---")):
                found = said & _words(line)
                if found:
                    return found
    return set()


def names_the_commit(summary: str, commit: Commit, files: Sequence[FileChange]) -> bool:
    said = _words(summary) - GENERIC_WORDS
    if said & _commit_terms_hit(said, commit, files):
        return True
    # A Chinese summary of a Chinese commit: any two-character run shared with its text.
    cjk = _cjk_pairs(summary)
    return bool(cjk and cjk & _cjk_pairs(f"{commit.title}\n{commit.body}"))


def _kinds(files: Sequence[FileChange]) -> list[str]:
    """Each file's kind ("docs", "test", "ci", "tooling", "dependency", "lockfile", "source" …) by
    the offline analyser's path classifier — the one place this module imports it from."""
    from .offline.paths import classify_path

    return [classify_path(f.path).value for f in files]


# Kinds that ship nothing a user runs, in the order the message lists them; a reader's name for
# each is the catalogue's `llm_path.not_shipped.<kind>`.
_NOT_SHIPPED = ("docs", "test", "ci", "tooling")
_DEPENDENCY_KINDS = frozenset({"dependency", "lockfile"})


class ShippedNothing:
    """The kinds of files a commit changes when none ships ("documentation and tests"), named
    in the language of the sentence around them."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: Sequence[str]):
        self.kinds = tuple(kinds)

    def say(self, lang: str | None) -> str:
        words = (catalogue_text(lang, f"llm_path.not_shipped.{kind}") for kind in self.kinds)
        return catalogue_text(lang, "llm_path.and").join(words)


def only_docs_or_tests(files: Sequence[FileChange]) -> ShippedNothing | None:
    """The kinds ("documentation and tests", told in the reader's language) when every file is
    documentation, tests, CI configuration or tooling, else None."""
    kinds = set(_kinds(files))
    if not kinds or not kinds <= set(_NOT_SHIPPED):
        return None
    return ShippedNothing([kind for kind in _NOT_SHIPPED if kind in kinds])


_VERSION = re.compile(r"(?<![\w.])v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.]+)?(?![\w])")


def patch_level_bump(files: Sequence[FileChange]) -> bool:
    """True when the commit only moves dependencies by patch releases (1.2.3 → 1.2.4): every file
    a manifest, lockfile, doc, test or CI file, at least one version changed, and in each change
    block the removed and added versions pair up with the same major and minor. A new or removed
    package, or a patch the source did not give, is not provably patch-level: False."""
    kinds = _kinds(files)
    allowed = _DEPENDENCY_KINDS | set(_NOT_SHIPPED)
    if not files or not set(kinds) <= allowed or not set(kinds) & _DEPENDENCY_KINDS:
        return False
    pairs = 0
    for f, kind in zip(files, kinds):
        if kind not in _DEPENDENCY_KINDS:
            continue
        if not f.patch:
            return False
        for removed, added in _change_blocks(f.patch):
            old = [m.groups() for line in removed for m in _VERSION.finditer(line)]
            new = [m.groups() for line in added for m in _VERSION.finditer(line)]
            if len(old) != len(new):
                return False
            for a, b in zip(old, new):
                if a == b:
                    continue
                if a[0] != b[0] or a[1] != b[1] or a[2] is None or b[2] is None:
                    return False
                pairs += 1
    return pairs > 0


def _change_blocks(patch: str):
    """(removed lines, added lines) of each run of changed lines in a unified diff."""
    removed: list[str] = []
    added: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
        else:
            if removed or added:
                yield removed, added
            removed, added = [], []
    if removed or added:
        yield removed, added


def importance_contradiction(analysis: Analysis, files: Sequence[FileChange]) -> str | None:
    """Why `high` cannot be right for these files (docs, tests, CI or tooling only; a patch-level
    dependency update), else None. A security change may be high anywhere."""
    if analysis.importance is not Importance.HIGH or analysis.change_type in SAFE_TYPES_FOR_DOCS:
        return None
    if (only := only_docs_or_tests(files)) is not None:
        return phrase("llm_path.high_but_changes_only", kinds=only)
    if patch_level_bump(files):
        return phrase("llm_path.high_but_patch_bumps")
    return None


def check_meaning(
    analysis: Analysis, commit: Commit, files: Sequence[FileChange], our_text: str, lang: str | None = None
) -> None:
    """InvalidAnswer (with a code for the counter) when a well-formed answer says nothing.
    `our_text` is the prompt as we wrote it: instructions, placeholders and the offline hint,
    without the commit's own text; `lang`, the language every text of the answer must be in."""
    if (key := echoed_field(analysis, our_text)) is not None:
        raise InvalidAnswer(phrase("llm_path.copies_prompt", key=key), "placeholder")
    if summary_too_short(analysis.summary):
        raise InvalidAnswer(phrase("llm_path.summary_too_short"), "summary_too_short")
    if repeats_title(analysis.importance_reason, commit):  # before the language: the title is English
        raise InvalidAnswer(phrase("llm_path.reason_is_title"), "reason_is_title")
    if lang and (key := foreign_field(analysis, lang)) is not None:
        raise InvalidAnswer(language_problem(key, lang), "wrong_language")
    if not names_the_commit(analysis.summary, commit, files):
        raise InvalidAnswer(phrase("llm_path.summary_unrelated"), "summary_unrelated")
    if (why := importance_contradiction(analysis, files)) is not None:
        raise InvalidAnswer(why, "importance_contradiction")


def foreign_field(analysis: Analysis, lang: str) -> str | None:
    """The first text of the answer not written in `lang` — any field on its own, or all its prose
    together (a small model asked for Chinese writes English from the English commit it read,
    sometimes in one risk only: the reader would still read English)."""
    for key, value in _text_fields(analysis):
        if wrong_language(value, lang):
            return key
    if wrong_language("\n".join(value for _, value in _text_fields(analysis)), lang):
        return "answer"
    return None


def language_problem(key: str, lang: str):
    """The check's sentence for a text in the wrong language, naming the language wanted."""
    wanted = phrase("llm_path.language_zh" if lang == "zh" else "llm_path.language_en")
    found = phrase("llm_path.language_en" if lang == "zh" else "llm_path.language_zh")
    return phrase("llm_path.wrong_language", key=key, found=found, wanted=wanted)


_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")


def repeats_title(reason: str, commit: Commit) -> bool:
    """True when the importance reason is only the commit's title (its PR number aside): it
    says what changed, not why that matters."""
    title = _norm(_PR_SUFFIX.sub("", commit.title))
    said = _norm(_PR_SUFFIX.sub("", reason))
    return bool(title) and said == title


def _text_fields(analysis: Analysis):
    yield "summary", analysis.summary
    yield "importance_reason", analysis.importance_reason
    yield "impact", analysis.impact
    for key in INSIGHT_KEYS:
        yield f"insights.{key}", getattr(analysis.insights, key)
    for item in analysis.risks:
        yield "risks", item
    for item in analysis.recommendations:
        yield "recommendations", item


def normalise(text: str) -> str:
    """Lower case, punctuation gone, spaces single: how the copy checks compare texts."""
    return _norm(text)


def _norm(text: str) -> str:
    # The short texts compared (the prompt's placeholders, the hint's reason, a field) repeat
    # from one answer to the next: remembered. A whole prompt differs every time, but most of
    # its lines (the template's) do not: it is normalised line by line, each line remembered —
    # the same text, since a newline only ever separates words.
    if len(text) <= _SHORT:
        return _norm_short(text)
    return " ".join(filter(None, map(_norm_line, text.split("\n"))))


_SHORT = 300
_NON_WORD = re.compile(r"[^\w\u3400-\u9fff]+")


def _normalised(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


_norm_short = functools.lru_cache(maxsize=4096)(_normalised)
_norm_line = functools.lru_cache(maxsize=8192)(_normalised)


def _words(text: str) -> set[str]:
    """Identifiers and their snake/camel parts, lower-cased, three letters or more."""
    out: set[str] = set()
    for word in _WORD.findall(text or ""):
        out.add(word.lower())
        out.update(p.lower() for p in _PARTS.findall(word))
    return {w for w in out if len(w) >= 3}


def _cjk_pairs(text: str) -> set[str]:
    runs = re.findall(r"[\u3400-\u9fff]{2,}", text or "")
    return {run[i : i + 2] for run in runs for i in range(len(run) - 1)}
