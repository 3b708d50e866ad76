"""The noise options every digest-making command shares: `paths GLOB…`, `exclude GLOB…`,
`authors NAME…`, `exclude-authors NAME…` and `bots show|collapse` (`digest`, `week`, `subscribe`).
Pure: words in, the other words and the options out, or a CommandError in the reader's language.

`paths`, `exclude`, `authors` and `exclude-authors` take every word after them up to the next
option word, so they come after the dates and repositories: `/digest 2026-01-19 astral-sh/uv paths
crates/uv-resolver/** exclude **/*.md`. A name with a space is quoted: `authors "Grace Hopper"`.
With `allow_none` (subscribe), `paths none` (`authors none` …) clears a subscription's filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.models import BOT_MODES
from ...digest.authorfilter import MAX_AUTHORS, AuthorError
from ...digest.authorfilter import normalise as normalise_name
from ...digest.pathfilter import MAX_GLOBS, GlobError, normalise
from ...i18n import echo, phrase
from ...sources.branches import bad_pattern, spec_of
from ..grammar import CommandError, choice

GLOB_OPTIONS = ("paths", "exclude")
AUTHOR_OPTIONS = ("authors", "exclude-authors")
FILTER_WORDS = (*GLOB_OPTIONS, *AUTHOR_OPTIONS, "bots", "branch")
_OPEN_QUOTES, _CLOSE_QUOTES = '"“「', '"”」'


@dataclass(frozen=True)
class FilterArgs:
    paths: tuple[str, ...] | None = None  # None: not given; (): cleared with `paths none`
    exclude: tuple[str, ...] | None = None
    bots: str | None = None  # collapse | show; None: not given
    authors: tuple[str, ...] | None = None  # None: not given; (): cleared with `authors none`
    exclude_authors: tuple[str, ...] | None = None
    branch: str | None = None  # `branch main release/*`: the patterns, kept space-separated; None: not given


def split_filters(
    words: list[str], command: str, stop_words: tuple[str, ...] = (), allow_none: bool = False
) -> tuple[list[str], FilterArgs]:
    """(the words that are not noise options, the noise options)."""
    rest: list[str] = []
    found: dict[str, object] = {}
    ends = {w.lower() for w in (*FILTER_WORDS, *stop_words)}
    i = 0
    while i < len(words):
        word = words[i].lower()
        if word not in FILTER_WORDS:
            rest.append(words[i])
            i += 1
            continue
        if word in found:
            raise CommandError(phrase("errors.option_twice", option=word), command)
        if word == "bots":
            if i + 1 >= len(words):
                raise CommandError(
                    phrase("errors.option_needs_value", option=word, expected="|".join(BOT_MODES)), command
                )
            found[word] = choice(words[i + 1], BOT_MODES, word, command)
            i += 2
            continue
        globs = []
        i += 1
        if word == "branch" and i < len(words):  # its first word is a name, whatever it says
            globs.append(words[i])  # (`branch daily` follows a branch named daily)
            i += 1
        while i < len(words) and words[i].lower() not in ends:
            globs.append(words[i])
            i += 1
        if word == "branch":
            found[word] = _branches(globs, command)
        elif word in AUTHOR_OPTIONS:
            found[word] = _names(word, globs, command, allow_none)
        else:
            found[word] = _globs(word, globs, command, allow_none)
    return rest, FilterArgs(
        found.get("paths"),  # type: ignore[arg-type]
        found.get("exclude"),  # type: ignore[arg-type]
        found.get("bots"),  # type: ignore[arg-type]
        found.get("authors"),  # type: ignore[arg-type]
        found.get("exclude-authors"),  # type: ignore[arg-type]
        found.get("branch"),  # type: ignore[arg-type]
    )


def _branches(words: list[str], command: str) -> str:
    """The branch names and globs after `branch` (`main release/*`), kept as one string."""
    if not words:
        raise CommandError(
            phrase("errors.option_needs_value", option="branch", expected=phrase("errors.expect_branch")), command
        )
    bad = bad_pattern(" ".join(words))
    if bad is not None:
        raise CommandError(phrase("errors.bad_branch", value=echo(bad)), command)
    return spec_of(words) or ""


def _names(option: str, words: list[str], command: str, allow_none: bool) -> tuple[str, ...]:
    """The names after `authors` / `exclude-authors`: one a word, or several words in quotes."""
    if not words:
        raise CommandError(phrase("authors.needs_names", option=option), command)
    if allow_none and [w.lower() for w in words] == ["none"]:
        return ()
    names: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word[:1] in _OPEN_QUOTES:
            run = [word]
            while not (run[-1][-1:] in _CLOSE_QUOTES and (len(run) > 1 or len(word) > 1)):
                i += 1
                if i >= len(words):
                    raise CommandError(phrase("authors.unclosed_quote", value=echo(" ".join(run))), command)
                run.append(words[i])
            word = " ".join(run)[1:-1]
        names.append(word.strip("`"))  # chat clients like to put names in backticks
        i += 1
    if len(names) > MAX_AUTHORS:
        raise CommandError(phrase("authors.too_many", option=option, limit=MAX_AUTHORS), command)
    out = []
    for name in names:
        try:
            out.append(normalise_name(name))
        except AuthorError as exc:
            raise CommandError(phrase(f"authors.{exc.reason}", value=echo(name)), command) from None
    return tuple(dict.fromkeys(out))


def _globs(option: str, globs: list[str], command: str, allow_none: bool) -> tuple[str, ...]:
    if not globs:
        raise CommandError(phrase("noise.needs_globs", option=option), command)
    if allow_none and [g.lower() for g in globs] == ["none"]:
        return ()
    if len(globs) > MAX_GLOBS:
        raise CommandError(phrase("noise.too_many_globs", option=option, limit=MAX_GLOBS), command)
    out = []
    for glob in globs:
        try:
            out.append(normalise(glob.strip("`")))  # chat clients like to put paths in backticks
        except GlobError as exc:
            raise CommandError(phrase(f"noise.{exc.reason}", **exc.fields), command) from None
    return tuple(dict.fromkeys(out))
