"""`git diff-tree --stdin` read as git writes it: each commit's part of the output as soon as the
next commit's begins, so a day's first analyses need not wait for the whole day's diffs (0.7 s of
git and splitting for a busy day) — and one git process reads them all (a second process would
inflate the blobs' deltas again: batches of 16, 32, … commits cost 40 % more git CPU).

The output repeats each input sha then a NUL (`--always`: even for an empty diff), then the
commit's -z raw entries, an empty entry, and its patch text. A patch line never is 40 hex digits
then NUL, so a sha starts a part at the start of the output, of a line or of an entry.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from typing import IO


def split_parts(out: str, shas: Sequence[str]) -> list[tuple[str, str]]:
    """(sha, its part) of a whole output, in input order; a sha not found is left out."""
    starts: list[tuple[str, int]] = []
    at = 0
    for sha in shas:
        pos = out.find(sha + "\0", at)
        while pos > 0 and out[pos - 1] not in "\n\0":
            pos = out.find(sha + "\0", pos + 1)
        if pos < 0:
            continue
        starts.append((sha, pos))
        at = pos + len(sha) + 1
    return [
        (sha, out[pos + len(sha) + 1 : starts[i + 1][1] if i + 1 < len(starts) else len(out)])
        for i, (sha, pos) in enumerate(starts)
    ]


class Parts:
    """The parts of an output fed block by block: `feed` gives those complete (the next sha's
    part has begun), `end` the rest once the output is whole (split as `split_parts` does, so a
    sha git left out does not hold the others back for good: they wait for the end)."""

    def __init__(self, shas: Sequence[str]):
        self._shas = list(shas)
        self._next = 0  # the sha whose start is looked for next
        self._current: str | None = None  # the sha whose part is being read
        self._pending = bytearray()  # the output since the current part's start
        self._seen = 0  # how much of `_pending` was looked through for the next start

    def feed(self, block: bytes) -> list[tuple[str, str]]:
        self._pending += block
        found = []
        while self._next < len(self._shas):
            sha = self._shas[self._next]
            marker = sha.encode() + b"\0"
            pos = self._pending.find(marker, max(0, self._seen - len(marker)))
            while pos > 0 and self._pending[pos - 1] not in b"\n\0":
                pos = self._pending.find(marker, pos + 1)
            if pos < 0:
                self._seen = len(self._pending)
                break
            if self._current is not None:
                found.append((self._current, self._pending[:pos].decode("utf-8", "replace")))
            del self._pending[: pos + len(marker)]
            self._current, self._next, self._seen = sha, self._next + 1, 0
        return found

    def end(self) -> list[tuple[str, str]]:
        rest = self._pending.decode("utf-8", "replace")
        if self._current is None:
            return split_parts(rest, self._shas)
        return split_parts(f"{self._current}\0{rest}", [self._current, *self._shas[self._next :]])


def open_batch(args: list[str], stdin: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The git process, its input written by a thread of its own (git writes while it reads:
    both pipes must move, or a large day blocks both ends)."""
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    threading.Thread(target=_write, args=(proc.stdin, stdin.encode()), daemon=True).start()
    return proc


def _write(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    try:
        pipe.write(data)
    except (OSError, ValueError):
        pass  # git stopped early, or its reader closed the pipe: the exit status says so
    finally:
        try:
            pipe.close()
        except (OSError, ValueError):
            pass
