"""What `git diff-tree` prints, read: its `--raw` and `--numstat` entries, and its patch text
split into each file's patch with the file's lines added and deleted (bot/sources/localgit.py
runs git; this module only reads what it printed)."""

from __future__ import annotations

import re

_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "modified"}


def parse_raw_numstat(raw: str) -> tuple[list[tuple[str, str, str]], dict[str, tuple[int | None, int | None]]]:
    """Parse `diff-tree -z --raw --numstat` output: [(status, old, new)], {new: (adds, dels)}."""
    tokens = raw.split("\0")
    entries: list[tuple[str, str, str]] = []
    stats: dict[str, tuple[int | None, int | None]] = {}
    i = 0
    if tokens and re.fullmatch(r"[0-9a-f]{40}", tokens[0].strip()):
        i = 1  # diff-tree prints the commit id first when given a single commit
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(":"):
            letter = tok.split()[-1][0]
            if letter in "RC":
                old, new = tokens[i + 1], tokens[i + 2]
                i += 3
            else:
                old = new = tokens[i + 1]
                i += 2
            entries.append((_STATUS.get(letter, "modified"), old, new))
        elif "\t" in tok:
            adds, dels, path = tok.split("\t", 2)
            if path == "":  # rename in -z numstat: "a\td\t" then old, new
                path = tokens[i + 2]
                i += 3
            else:
                i += 1
            stats[path] = (int(adds) if adds.isdigit() else None, int(dels) if dels.isdigit() else None)
        else:
            i += 1
    return entries, stats


def split_patches_stats(text: str) -> tuple[dict[str, str], dict[str, tuple[int | None, int | None]]]:
    """Each file's new path → its patch body (from the first @@ on, as GitHub's `patch`), and its
    (lines added, lines deleted) counted from the patch as
    `--numstat` counts them — (None, None) for a binary file — so git need not diff every file
    a second time for the numstat (a third of a busy day's `diff-tree`)."""
    patches: dict[str, str] = {}
    stats: dict[str, tuple[int | None, int | None]] = {}
    # (a split at each line starting `diff --git `, as `re.split("^diff --git ", flags=re.M)` but
    # without a regex scan of megabytes; a chunk loses only its trailing newline, stripped below)
    for chunk in ("\n" + text).split("\n" + _DIFF_GIT)[1:]:
        minus = plus = renamed = None
        binary = False
        at = chunk.find("\n@@")
        # the header lines, up to the first hunk: not the whole patch split into lines
        for line in (chunk[:at] if at >= 0 else chunk).splitlines():
            if line.startswith("Binary files "):
                binary = True
            elif line.startswith("--- "):
                minus = line[4:].removesuffix("\t")  # git appends a TAB to names with spaces
            elif line.startswith("+++ "):
                plus = line[4:].removesuffix("\t")
            elif line.startswith(("rename to ", "copy to ")):
                renamed = unquote(line.split(" to ", 1)[1])
            elif line.startswith("@@"):
                break
        if plus and plus != "/dev/null":
            new_path = unquote(plus)[2:]
        elif minus and minus != "/dev/null":
            new_path = unquote(minus)[2:]
        elif renamed:
            new_path = renamed
        else:
            header = chunk.splitlines()[0]
            new_path = unquote(header.rsplit(" b/", 1)[-1]) if " b/" in header else header
        body = patches[new_path] = chunk[at + 1 :].rstrip("\n") if at >= 0 else ""
        # a hunk's lines start with +, - or a space (and `\ No newline`); the body starts with @@
        counted: tuple[int | None, int | None] = (None, None) if binary else (body.count("\n+"), body.count("\n-"))
        if new_path in stats:  # a type change (file → symlink) is two patches of one path: summed
            counted = summed(stats[new_path], counted)
        stats[new_path] = counted
    return patches, stats


_DIFF_GIT = "diff --git "


def summed(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    if a[0] is None or b[0] is None or a[1] is None or b[1] is None:
        return (None, None)
    return (a[0] + b[0], a[1] + b[1])


def over_bytes(text: str, limit: int) -> bool:
    """len(text.encode()) > limit, without encoding a text that is surely under it (a character
    is at most 4 bytes in UTF-8) or surely over it (at least 1)."""
    if len(text) * 4 <= limit:
        return False
    return len(text) > limit or len(text.encode()) > limit


def unquote(path: str) -> str:
    """git quotes paths with special characters C-style ("a\\tb", octal bytes); undo that."""
    if not (len(path) >= 2 and path[0] == '"' and path[-1] == '"'):
        return path
    out, body, i = bytearray(), path[1:-1], 0
    simple = {"t": 9, "n": 10, "r": 13, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and i + 3 < len(body) + 1 and body[i + 1 : i + 4].isdigit():
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(simple.get(nxt, ord(nxt)))
            i += 2
            continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", "replace")
