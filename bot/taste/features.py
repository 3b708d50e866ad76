"""A commit → the words the learned profile reads.

What a reader skims before deciding whether a change matters, and nothing a listing of 2,000
commits cannot give cheaply: the title's words, its bracket tags and conventional prefix, the
areas it touches (top folder and the folder below), the kinds of file (source, tests, docs …),
how many files, and the changelog fragments it adds. No patches: history is read without them,
and a word must mean the same in training and in a digest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..analysis.offline.paths import classify_path
from .notes import fragment_category, fragment_heading, is_notes_file

_WORD = re.compile(r"[a-z][a-z0-9_]+")
_TAG = re.compile(r"\[([^\]]{1,40})\]")
_PREFIX = re.compile(r"^\s*([a-z]+)(?:\(([^)]{1,40})\))?!?:", re.I)
_PR = re.compile(r"\(#\d+\)\s*$")
# Words that say nothing about importance in any project.
_STOP = frozenset("the an of to in for and on with from by at as is be it this that into use via".split())


def commit_words(title: str, paths: Iterable[str], added: Iterable[str] = ()) -> list[str]:
    words: list[str] = []
    title = _PR.sub("", title)
    prefix = _PREFIX.match(title)
    if prefix:
        words.append("cc:" + prefix.group(1).lower())
        if prefix.group(2):
            words.append("scope:" + prefix.group(2).strip().lower())
    words += ["tag:" + tag.strip().lower() for tag in _TAG.findall(title)]
    words += [w for w in _WORD.findall(_TAG.sub(" ", title.lower())) if w not in _STOP]
    paths = list(paths)
    kinds = set()
    for path in paths:
        parts = path.split("/")
        words.append("top:" + (parts[0] if len(parts) > 1 else "/"))
        if len(parts) > 2:
            words.append("dir:" + "/".join(parts[:2]))
        kind = classify_path(path).value
        kinds.add(kind)
        words.append("kind:" + kind)
        if is_notes_file(path):
            words.append("notes:edited")
    if len(kinds) == 1:
        words.append("only:" + kinds.pop())
    words += ["frag:" + fragment_heading(path) for path in added if fragment_category(path)]
    words.append("files:" + _bucket(len(paths)))
    return list(dict.fromkeys(words))


def _bucket(n: int) -> str:
    return "0" if n == 0 else "1" if n == 1 else "2-3" if n <= 3 else "4-10" if n <= 10 else "11+"
