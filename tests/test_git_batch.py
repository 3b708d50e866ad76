"""`git diff-tree --stdin` output cut into each commit's part (bot/sources/git_batch.py), whole or
as git writes it: a sha inside a patch line is not a commit's start, a sha git left out is
skipped, and any block size gives the same parts as the whole output."""

from __future__ import annotations

import pytest

from bot.sources.git_batch import Parts, split_parts

A, B, C, D = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)
# A's patch quotes C's sha followed by a NUL (not at a line's or an entry's start: not a start)
PART_A = f":100644 100644 1 2 M\0src/é.py\0\0diff --git a/src/é.py b/src/é.py\n+s = '{C}\0'\n+t = 'ü'\n"
PART_C = ":000000 100644 0 3 A\0new.txt\0\0diff --git a/new.txt b/new.txt\n+one\n"
PART_D = ""  # an empty diff (`--always` still writes the sha)
OUTPUT = f"{A}\0{PART_A}{C}\0{PART_C}{D}\0{PART_D}"
EXPECTED = [(A, PART_A), (C, PART_C), (D, PART_D)]  # B: git wrote nothing for it
E = "e" * 40
QUOTED_FIRST = f"'{C}\0'\n"  # a part whose very first characters quote the next sha
CASES = [
    (OUTPUT, [A, B, C, D], EXPECTED),
    (OUTPUT, [A, C, D], EXPECTED),
    (f"{A}\0{PART_A}{E}\0{C}\0{PART_C}", [A, E, C], [(A, PART_A), (E, ""), (C, PART_C)]),  # empty mid-day
    (f"{A}\0{QUOTED_FIRST}{C}\0{PART_C}", [A, C], [(A, QUOTED_FIRST), (C, PART_C)]),
    (f"{A}\0raw", [A], [(A, "raw")]),  # output cut short: it ends inside a part
]


@pytest.mark.parametrize("output, shas, expected", CASES)
def test_a_whole_output_is_split_at_each_commits_own_start(output, shas, expected):
    assert split_parts(output, shas) == expected


def test_nothing_written_is_no_part():
    assert split_parts("", [A, B]) == []
    assert Parts([A, B]).end() == []


@pytest.mark.parametrize("size", [1, 3, 41, 64, 1000])
@pytest.mark.parametrize("output, shas, expected", CASES)
def test_parts_fed_block_by_block_are_the_whole_outputs(size, output, shas, expected):
    data = output.encode()
    parts = Parts(shas)
    given: list[tuple[str, str]] = []
    for at in range(0, len(data), size):
        given += parts.feed(data[at : at + size])
    given += parts.end()
    assert given == expected


def test_a_part_is_given_as_soon_as_the_next_commits_begins():
    parts = Parts([A, C, D])
    assert parts.feed(f"{A}\0{PART_A}".encode()) == []  # A's part may go on
    assert parts.feed(f"{C}\0".encode()) == [(A, PART_A)]
    assert parts.feed(f"{PART_C}{D}\0".encode()) == [(C, PART_C)]
    assert parts.end() == [(D, PART_D)]
