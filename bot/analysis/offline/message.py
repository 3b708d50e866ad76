"""Reading a commit message's body: the paragraphs that say something, and whole sentences.

Pull-request templates fill bodies with headings, check-boxes, links and shouted instructions;
these helpers drop that boilerplate so the rules and the summary read only what the author wrote.
"""

from __future__ import annotations

import re

_BOILERPLATE = re.compile(
    r"^(#{1,6}\s|[-*]\s*\[[ xX]\]|<[^>]+>|[-=*_]{3,}$|\|"
    r"|(fix(es|ed)?|close[sd]?|resolve[sd]?|related( to)?|refs?|see|part of)\b[\s:]*(#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)"
    r"|https?://\S+$|(purpose|test plan|test result|description|motivation|changes?|summary)\s*:?\s*$)",
    re.I,
)


_SHOUTING = re.compile(r"^[A-Z0-9 ,.'()/:;!?*-]{20,}$")  # template instructions in capitals


_REF_LINE = re.compile(
    r"^(fix(es|ed)?|close[sd]?|resolve[sd]?|related( to)?|refs?|see|part of)\b[\s:]*"
    r"(#\d+|https?://\S+|[\w.-]+/[\w.-]+#\d+)[\s.,;]*$",
    re.I,
)


def _drop_line(line: str) -> bool:
    """Template boilerplate: headings, boxes, rules, tables, bare links and reference-only lines
    ('Fixes #12'); a line that goes on to say something ('Fixes #12 by …') is kept."""
    if _SHOUTING.match(line):
        return True
    if not _BOILERPLATE.match(line):
        return False
    if re.match(r"^(fix|close|resolve|related|ref|see|part of)", line, re.I):
        return bool(_REF_LINE.match(line))
    return True


def first_paragraphs(body: str, limit: int = 1500) -> str:
    """The opening paragraphs that say something (template boilerplate dropped), up to `limit`."""
    text = re.sub(r"<!--.*?-->", "", body or "", flags=re.S)
    text = re.sub(r"<details>.*?</details>", "", text, flags=re.S | re.I)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    kept: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in para.splitlines()]
        if (
            kept
            and lines
            and re.match(r"^(#{1,6}\s|[A-Z][\w ]{2,30}\n?-{2,}$)", lines[0])
            and not re.match(r"^#{1,6}\s*(summary|description|motivation|purpose|what|why)\b", lines[0], re.I)
        ):
            break  # the next section (test plan, checklist …) is not the summary
        joined = " ".join(re.sub(r"^[-*•]\s+|^\d+[.)]\s+", "", ln) for ln in lines if ln and not _drop_line(ln))
        if joined:
            kept.append(joined)
        if sum(map(len, kept)) >= limit:
            break
    return "\n".join(kept)[:limit]


def first_paragraph(body: str) -> str:
    """The first paragraph of the message that says something (no template headings, boxes, links)."""
    text = re.sub(r"<!--.*?-->", "", body or "", flags=re.S)
    text = re.sub(r"<details>.*?</details>", "", text, flags=re.S | re.I)
    for para in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in para.splitlines()]
        kept = [
            re.sub(r"^[-*•]\s+", "", ln)
            for ln in lines
            if ln and not _BOILERPLATE.match(ln) and not _SHOUTING.match(ln)
        ]
        joined = re.sub(r"\s+", " ", " ".join(kept)).strip()
        if len(re.findall(r"\w", joined)) >= 12:
            return joined
    return ""


# --- the words, without the names ---------------------------------------------------------------

_SPAN = re.compile(r"``.*?``|`[^`\n]*`")
_SLASHED = re.compile(r"(?<!\S)(?=\S*\w)\S*[/\\]\S*")
_NAMES = re.compile(
    r"<?https?://\S+>?"  # links
    r"|\b[\w-]+(?:\.[A-Za-z_][\w-]*)+\b"  # file and module names: breaking.py, pytest.Instance
    r"|\b\w*_\w*\b"  # identifiers: test_breaking, is_breaking, prohibit_none_typevar_overlap
)
_MASK = " · "


def _path(m: re.Match[str]) -> str:
    """A slashed token that is a path or a repository (src/app/x.py, Swatinem/rust-cache, ./x) is
    masked; words joined by a slash ("security/permissions", "read/write") are prose and stay."""
    token = m.group(0).rstrip(".,;:!?)")
    named = token.count("/") + token.count("\\") >= 2 or token[:1] in "./~\\" or re.search(r"[-_.\d@]", token)
    return _MASK if named else m.group(0)


def prose(text: str, spans: bool = True) -> str:
    """The text with the names in it masked: links, paths, file and module names, snake_case
    identifiers and (with `spans`) code spans. A word inside a name (`breaking.py`, `is_reserved`)
    is not something the author says about the change; the rules that read words read these."""
    if spans:
        text = _SPAN.sub(_MASK, text)
    return _NAMES.sub(_MASK, _SLASHED.sub(_path, text))


# --- whole sentences ---------------------------------------------------------------------------

_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|resp|no|fig)\.$", re.I)
_PR_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:pull|issues)/(\d+)\S*")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)]+)\)")
_URL = re.compile(r"<?https?://\S+>?")
_REF_ONLY = re.compile(
    r"^(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|part of|follow[- ]up (to|of)|related( to)?"
    r"|stacked on( top of)?|precursor to|port of)\b[\s:]*[#\w./-]*[.)]?$",
    re.I,
)


def clean_prose(text: str) -> str:
    text = _MD_LINK.sub(r"\1", text)
    text = _PR_URL.sub(r"#\1", text)
    text = _URL.sub("", text)
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; an end is '.', '!' or '?' before a space (not after 'e.g.' or
    inside '0.16.4'), or a Chinese full stop."""
    text = clean_prose(text)
    out: list[str] = []
    start = 0
    for m in re.finditer(r"[.!?](?=\s+[^\s])|[。！？]", text):
        piece = text[start : m.end()].strip()
        if m.group(0) == "." and _ABBREVIATIONS.search(piece):
            continue
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        # A sentence that introduced a code block ("… written as a string:") ends here.
        out.append(tail if re.search(r"[.!?。！？)]$", tail) else tail.rstrip(",;:") + ".")
    return [s for s in out if not _REF_ONLY.match(s)]


def whole_sentences(text: str, limit: int) -> str:
    """As many whole sentences as fit in `limit` characters ('' when not even the first fits):
    a summary is cut at a sentence boundary or not at all."""
    kept: list[str] = []
    size = 0
    for sentence in split_sentences(text):
        if size + len(sentence) + (1 if kept else 0) > limit:
            break
        kept.append(sentence)
        size += len(sentence) + (1 if kept else 0)
    return " ".join(kept)
