"""A realistic day for the speed benches: commits whose diffs are the size of a real repository's.

The speed benches used to digest days of three-line commits, where the bot's CPU around each LLM
call is mostly fixed costs; real days have diffs of a few lines to tens of thousands, and the
work that grows with the diff (reading it, redaction, choosing what fits the prompt, the rules'
evidence) is what a busy repository pays. This module makes such days, once, for every bench
(bench_speed, bench_digest, bench_scale):

- The *sizes* are sampled from real histories: for each commit of a period, its files' directory,
  extension, status (added / modified / deleted) and lines added and deleted, from
  `git log --raw --numstat` of a fetched mirror. `bench/data/diff_sizes.json` holds such a sample
  of astral-sh/ruff (2026-07-01 – 2026-09-01, 887 commits) and pypa/pip (2025, 578 commits) —
  numbers, directories and extensions only, no code and no titles. Regenerate it with
  `python bench/realistic_day.py --mirrors DIR`.
- A day of N commits draws N − `large` commits from the sample at random (seeded) and `large`
  more from its largest 2 % (by lines changed): busy days have a few big refactors, snapshot
  updates or vendored upgrades.
- The *contents* are generated: code-like lines for source files (Python, Rust, TypeScript …),
  prose for docs, key/value lines for configuration, lock-file stanzas with hashes, snapshot
  text; a modified file exists before the day with enough lines, and its change is spread over
  a few hunks, as real edits are. File names are generated in the sampled directories.
- Titles and bodies follow the shapes of squash-merged projects (`[area] Fix … (#1234)`,
  `Bump x from 1.2.3 to 1.2.4`, a paragraph of body on some).

`write_git(repo, day)` writes a day into a real git repository (one `git fast-import`: a base
commit the day before holding every file the day modifies, then the day's commits);
`github_files(commit)` gives the same commit as the fake GitHub's `FakeFile`s, patches included.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = ROOT / "bench" / "data" / "diff_sizes.json"
SAMPLES = {  # what diff_sizes.json holds: repository → (period start, end)
    "astral-sh/ruff": ("2026-07-01", "2026-09-01"),
    "pypa/pip": ("2025-01-01", "2026-01-01"),
}
LARGE_SHARE = 0.02  # "large" commits: the largest 2 % of the sample, by lines changed


# --- the sample ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileSize:
    directory: str
    ext: str  # "" for none
    status: str  # A, M, D
    adds: int | None  # None: binary
    dels: int | None

    @property
    def lines(self) -> int:
        return (self.adds or 0) + (self.dels or 0)


def sample_sizes(mirror: Path, since: str, until: str) -> list[list[FileSize]]:
    """Each non-merge commit of `since`..`until` on the mirror's HEAD: its files' sizes."""
    out = subprocess.run(
        ["git", "--git-dir", str(mirror), "log", "--no-merges", f"--since={since}", f"--until={until}"]
        + ["--format=@@%H", "--raw", "--numstat", "--no-renames", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    commits = []
    for record in out.split("@@")[1:]:
        status: dict[str, str] = {}
        files = []
        for line in record.strip().splitlines()[1:]:
            if line.startswith(":"):
                meta, path = line.split("\t", 1)
                status[path] = meta.split()[-1][0]
            elif "\t" in line:
                adds, dels, path = line.split("\t", 2)
                directory, _, name = path.rpartition("/")
                ext = name.rpartition(".")[2] if "." in name.lstrip(".") else ""
                files.append(
                    FileSize(
                        directory,
                        ext,
                        status.get(path, "M") if status.get(path, "M") in "AMD" else "M",
                        None if adds == "-" else int(adds),
                        None if dels == "-" else int(dels),
                    )
                )
        if files:
            commits.append(files)
    return commits


def _encode(commits: list[list[FileSize]]) -> dict:
    dirs: dict[str, int] = {}
    rows = [[[dirs.setdefault(f.directory, len(dirs)), f.ext, f.status, f.adds, f.dels] for f in c] for c in commits]
    return {"dirs": list(dirs), "commits": rows}


def load_sizes(repo: str = "astral-sh/ruff", path: Path = SIZES) -> list[list[FileSize]]:
    data = json.loads(path.read_text())[repo]
    dirs = data["dirs"]
    return [[FileSize(dirs[d], ext, status, adds, dels) for d, ext, status, adds, dels in c] for c in data["commits"]]


def write_sizes(mirrors: Path, path: Path = SIZES) -> None:
    found = {}
    for repo, (since, until) in SAMPLES.items():
        commits = sample_sizes(mirrors / repo.replace("/", "+") / "repo", since, until)
        found[repo] = _encode(commits)
        print(f"{repo}: {len(commits)} commits {since} – {until}")
    path.write_text(json.dumps(found, separators=(",", ":")) + "\n")


# --- a day -------------------------------------------------------------------------------------
@dataclass
class GenFile:
    path: str
    status: str  # added | modified | removed
    before: str | None  # the text before the commit (None: added)
    after: str | None  # the text after (None: removed)
    binary: bytes | None = None  # a binary file's new content (before/after None)
    lines: int = 0  # lines added + deleted, as sampled


@dataclass
class DayCommit:
    title: str
    body: str
    when: datetime
    files: list[GenFile]
    large: bool = False

    @property
    def message(self) -> str:
        return self.title + ("\n\n" + self.body if self.body else "")

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)


@dataclass
class Day:
    commits: list[DayCommit]
    base: dict[str, str] = field(default_factory=dict)  # files that exist before the day
    base_when: datetime | None = None

    def summary(self) -> str:
        lines = sorted(c.lines for c in self.commits)
        files = sorted(len(c.files) for c in self.commits)
        large = [c for c in self.commits if c.large]
        return (
            f"{len(self.commits)} commits; lines changed a commit median {lines[len(lines) // 2]}, "
            f"p90 {lines[int(0.9 * (len(lines) - 1))]}, max {lines[-1]}, total {sum(lines)}; files a commit median "
            f"{files[len(files) // 2]}, max {files[-1]}; {len(large)} large commits "
            f"({', '.join(f'{c.lines} lines/{len(c.files)} files' for c in large)})"
        )


def make_day(
    n: int,
    first: datetime,
    step_seconds: int,
    *,
    large: int = 5,
    seed: int = 33,
    sizes: list[list[FileSize]] | None = None,
    max_files: int = 400,
    content_seed: int | None = None,
) -> Day:
    """N commits from `first`, `step_seconds` apart; `large` of them drawn from the sample's
    largest 2 %, at random places in the day. A commit of more than `max_files` files keeps that
    many (the largest sampled commits touch ~1,800 files; a digest sees the first 300 anyway).
    `content_seed`: the same commits' sizes, in the same order, with other contents (another day
    of the same shape)."""
    sizes = sizes if sizes is not None else load_sizes()
    rng = random.Random(seed)
    ranked = sorted(sizes, key=lambda c: sum(f.lines for f in c))
    cut = max(1, int(len(ranked) * LARGE_SHARE))
    big, usual = ranked[-cut:], ranked
    large = min(large, n)
    picks = [rng.choice(usual) for _ in range(n - large)] + [rng.choice(big) for _ in range(large)]
    flags = [False] * (n - large) + [True] * large
    order = list(range(n))
    rng.shuffle(order)
    gen = _Gen(rng if content_seed is None else random.Random(content_seed))
    commits = []
    for slot, index in enumerate(order):
        shape = picks[index][:max_files]
        when = first + timedelta(seconds=slot * step_seconds)
        commits.append(gen.commit(shape, when, flags[index]))
    return Day(commits, gen.base, first - timedelta(days=2))  # the day before stays empty


def write_git(repo, day: Day, author: str = "Ada Lovelace <ada@example.com>") -> None:
    """The day into `repo` (tests/gitrepo.GitRepo): a base commit the day before holding every
    file the day modifies or removes, then each commit, through one `git fast-import`."""
    out: list[bytes] = []
    try:
        has_main = bool(repo.git("rev-parse", "--verify", "--quiet", "refs/heads/main^{commit}").strip())
    except subprocess.CalledProcessError:
        has_main = False

    def commit(message: str, when: datetime, files: list[tuple[str, bytes | None]], first: bool) -> None:
        stamp = int(when.timestamp())
        offset = when.strftime("%z") or "+0000"
        data = (message + "\n").encode()
        out.extend(
            [
                b"commit refs/heads/main",
                f"author {author} {stamp} {offset}".encode(),
                f"committer {author} {stamp} {offset}".encode(),
                f"data {len(data)}".encode(),
                data,
            ]
        )
        if first and has_main:
            out.append(b"from refs/heads/main^0")
        for path, content in files:
            if content is None:
                out.append(f"D {path}".encode())
            else:
                out.extend([f"M 100644 inline {path}".encode(), f"data {len(content)}".encode(), content])

    base = [(p, t.encode()) for p, t in sorted(day.base.items())]
    commit("Initial import of the files the day changes", day.base_when or day.commits[0].when, base, True)
    for c in day.commits:
        files = [
            (f.path, f.binary if f.binary is not None else None if f.after is None else f.after.encode())
            for f in c.files
        ]
        commit(c.message, c.when, files, False)
    subprocess.run(
        ["git", "-C", str(repo.path), "fast-import", "--quiet"],
        input=b"\n".join(out) + b"\n",
        check=True,
        capture_output=True,
    )


def github_files(commit: DayCommit):
    """The commit's files as the fake GitHub's FakeFile (patches as GitHub sends them)."""
    from tests.fakes.github_server import FakeFile

    files = []
    for f in commit.files:
        if f.binary is not None:
            files.append(FakeFile(f.path, status=f.status, additions=0, deletions=0, patch=None))
            continue
        before = (f.before or "").splitlines()
        after = (f.after or "").splitlines()
        hunks = list(difflib.unified_diff(before, after, lineterm=""))[2:]
        adds = sum(1 for h in hunks if h.startswith("+"))
        dels = sum(1 for h in hunks if h.startswith("-"))
        files.append(FakeFile(f.path, status=f.status, additions=adds, deletions=dels, patch="\n".join(hunks)))
    return files


# --- contents ----------------------------------------------------------------------------------
_WORDS = (
    "request response config parser token cache client server session handler resolver index package "
    "version marker wheel source target module checker rule fixer lint format path option setting value "
    "buffer stream reader writer entry record table schema field column node tree visitor expr stmt scope "
    "binding symbol import export loader builder context state error result report message diagnostic "
    "range offset span line column width indent quote string number flag mode level limit retry timeout "
    "python project workspace environment interpreter venv lock hash digest url header body payload"
).split()
_AREAS = ("resolver", "installer", "cli", "linter", "formatter", "parser", "server", "cache", "docs", "network")
_DEPS = ("serde", "tokio", "clap", "regex", "rich", "packaging", "requests", "urllib3", "ruff", "mypy", "pytest")
_SOURCE = {"py", "pyi", "rs", "ts", "tsx", "js", "go", "c", "h", "cpp", "java", "sh"}
_DOCS = {"md", "rst", "txt", ""}
_CONFIG = {"toml", "yaml", "yml", "json", "json5", "cfg", "ini", "npmrc", "gitignore"}


POOL = 20_000


def _family(ext: str) -> str:
    if ext in ("py", "pyi"):
        return "py"
    if ext in _SOURCE:
        return "source"
    if ext in ("snap", "lock", "svg"):
        return ext
    return "config" if ext in _CONFIG else "prose"


class _Gen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.base: dict[str, str] = {}
        self.current: dict[str, str] = {}
        self.pr = 18000
        self.names: dict[tuple[str, str], list[str]] = {}
        self.pools: dict[str, list[str]] = {}
        self.syllables: list[str] = []

    def word(self) -> str:
        return self.rng.choice(_WORDS)

    def ident(self) -> str:
        name = "_".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(1, 3)))
        return name + "_%(n)s" if self.rng.random() < 0.6 else name  # a word more when drawn (text())

    def line(self, ext: str) -> str:
        r, w, i = self.rng, self.word, self.ident
        if ext in ("py", "pyi"):
            return r.choice(
                (
                    f"    {i()} = {i()}({i()}, {w()}={r.randint(0, 999)})",
                    f"    if {i()} is not None and {i()}.{w()}:",
                    f"        return {i()}.{w()}({i()!r})",
                    f"def {i()}({i()}: str, {w()}: int = {r.randint(0, 99)}) -> {w().title()}:",
                    f'    """{w().title()} the {w()} of the {w()} before {w()}ing it."""',
                    f"    # {w().title()} {w()} {w()}: the {w()} is {w()} when {w()} {w()}.",
                    f'        raise {w().title()}Error(f"{w()} {{{i()}}} is not a {w()}")',
                    f"from .{w()} import {w().title()}, {i()}",
                    f"    for {w()} in {i()}.{w()}s():",
                    "",
                )
            )
        if ext in _SOURCE:
            return r.choice(
                (
                    f"    let {i()} = {i()}(&{i()}, {r.randint(0, 999)})?;",
                    f"    if {i()}.is_{w()}() && !{i()}.{w()}() {{",
                    f"        return Err({w().title()}Error::{w().title()}({i()}.clone()));",
                    f"pub(crate) fn {i()}(&self, {w()}: &{w().title()}) -> Option<{w().title()}> {{",
                    f"    /// {w().title()} the {w()} of the {w()} before {w()}ing it.",
                    f"    // {w().title()} {w()} {w()}: the {w()} is {w()} when {w()} {w()}.",
                    f'        .map(|{w()}| format!("{{}} {w()} {{}}", {w()}, {i()}))',
                    f"use crate::{w()}::{{{w().title()}, {i()}}};",
                    "    }",
                    "",
                )
            )
        if ext == "snap":
            return r.choice(
                (
                    f"{r.randint(1, 400)} | {i()} = {i()}({w()})",
                    f"  |     ^^^^^ {w().upper()}{r.randint(100, 999)} {w().title()} {w()} is not {w()}",
                    f"help: {w().title()} the {w()}",
                    "  |",
                    "",
                )
            )
        if ext == "lock":
            return r.choice(
                (
                    f'name = "{i()}"',
                    f'version = "{r.randint(0, 9)}.{r.randint(0, 40)}.{r.randint(0, 9)}"',
                    f'checksum = "{r.getrandbits(256):064x}"',
                    'source = "registry+https://github.com/rust-lang/crates.io-index"',
                    f' "{i()}",',
                    "",
                )
            )
        if ext in _CONFIG:
            return r.choice(
                (
                    f'{i()} = "{w()}"',
                    f"{i()}: {r.randint(0, 99)}",
                    f'  "{i()}": "{w()} {w()}",',
                    f'{i()} = ["{w()}", "{w()}"]',
                    f"[{w()}.{w()}]",
                    "",
                )
            )
        if ext == "svg":
            return f'<path d="M{r.randint(0, 99)} {r.randint(0, 99)}L{r.randint(0, 99)} {r.randint(0, 99)}Z" fill="#{r.getrandbits(24):06x}"/>'
        return r.choice(  # docs and everything else: prose
            (
                f"The `{i()}` {w()} now {w()}s the {w()} when the {w()} is {w()}; see [{w()}]({w()}.md).",
                f"- `--{w()}-{w()}`: {w().title()} the {w()} before {w()}ing (default: `{w()}`).",
                f"## {w().title()} {w()}",
                f"{w().title()} {w()} {w()} {w()} the {w()} {w()}, {w()} {w()} {w()} {w()}.",
                "",
            )
        )

    def text(self, ext: str, n: int) -> list[str]:
        """n lines of a file of this kind, drawn from a pool of generated ones (making each line
        afresh takes seconds for a day of ruff's sizes), most identifiers given a word more as they are
        drawn: lines repeat about as often as in real code (blank lines, braces), not more. The
        words added are letters only: real identifiers seldom carry digits, and a digit makes a
        run of letters look like a token to the redaction (its cost would be overstated)."""
        family = _family(ext)
        pool = self.pools.get(family)
        if pool is None:
            pool = self.pools[family] = [self.line(ext) for _ in range(POOL)]
        if not self.syllables:
            letters = "bcdfghklmnprstvz"
            self.syllables = [a + v + b for a in letters for v in "aeiou" for b in letters]
        pick = self.rng.choice
        words = self.syllables
        return [
            line % {"n": pick(words) + pick(words)} if "%(n)s" in line else line for line in self.rng.choices(pool, k=n)
        ]

    def name(self, directory: str, ext: str) -> str:
        taken = self.names.setdefault((directory, ext), [])
        if taken and self.rng.random() < 0.3:  # the same file touched again later in the day
            return self.rng.choice(taken)
        stem = f"{self.word()}_{self.word()}_{len(taken)}"
        path = f"{directory}/{stem}" if directory else stem
        path += f".{ext}" if ext else ""
        taken.append(path)
        return path

    def edit(self, old: list[str], adds: int, dels: int, ext: str) -> list[str]:
        """`old` with `dels` lines removed and `adds` added, over a few hunks 20+ lines apart."""
        room = max(1, len(old) - dels)
        hunks = max(1, min(1 + (adds + dels) // 40, 12, max(1, len(old) // 30), room))
        new = list(old)
        starts = sorted(self.rng.sample(range(room), hunks))
        a_left, d_left = adds, dels
        for k, start in enumerate(reversed(starts)):
            share = hunks - k
            d = d_left // share
            a = a_left // share
            d_left -= d
            a_left -= a
            new[start : start + d] = self.text(ext, a)
        return new

    def commit(self, shape: list[FileSize], when: datetime, large: bool) -> DayCommit:
        files = []
        seen = set()
        for f in shape:
            path = self.name(f.directory, f.ext)
            if path in seen:
                path = self.name(f.directory, f.ext)
                if path in seen:
                    continue
            seen.add(path)
            ext = f.ext.lower()
            if f.adds is None:  # binary
                files.append(GenFile(path, "added", None, None, binary=self.rng.randbytes(200)))
                continue
            exists = path in self.current or path in self.base
            if f.status == "A" and not exists:
                after = self.text(ext, f.adds)
                self.current[path] = "\n".join(after) + "\n"
                files.append(GenFile(path, "added", None, self.current[path], lines=f.adds))
                continue
            if not exists:
                self.base[path] = self.current[path] = (
                    "\n".join(
                        self.text(ext, (f.dels or 0) + self.rng.randint(20, 400) if f.status != "D" else f.dels or 1)
                    )
                    + "\n"
                )
            before = self.current[path]
            if f.status == "D":
                del self.current[path]
                self.names[(f.directory, f.ext)].remove(path)
                files.append(GenFile(path, "removed", before, None, lines=before.count("\n")))
                continue
            old = before.splitlines()
            if len(old) < (f.dels or 0) + 2:  # a file shrunk by earlier edits of the day
                old += self.text(ext, (f.dels or 0) + 2 - len(old))
            self.current[path] = "\n".join(self.edit(old, f.adds or 0, f.dels or 0, ext)) + "\n"
            if self.current[path] == before:
                self.current[path] += self.line(ext) + "\n"
            files.append(GenFile(path, "modified", before, self.current[path], lines=f.lines))
        title, body = self.message(shape, large)
        return DayCommit(title, body, when, files, large)

    def message(self, shape: list[FileSize], large: bool) -> tuple[str, str]:
        r, w = self.rng, self.word
        self.pr += r.randint(1, 9)
        exts = {f.ext for f in shape}
        area = r.choice(_AREAS)
        if exts <= {"lock", "toml"} and r.random() < 0.7:
            title = f"Bump {r.choice(_DEPS)} from 0.{r.randint(1, 30)}.{r.randint(0, 9)} to 0.{r.randint(31, 60)}.0"
        elif exts <= _DOCS | {"md"}:
            title = f"[docs] Clarify the {w()} {w()} section"
        elif large:
            title = r.choice(
                (
                    f"[{area}] Move {w()} handling into its own crate",
                    f"Update snapshots for the new {w()} {w()} output",
                    f"[{area}] Rewrite the {w()} {w()} on top of the {w()} table",
                )
            )
        else:
            title = r.choice(
                (
                    f"[{area}] Fix {w()} {w()} when the {w()} is empty",
                    f"[{area}] Add `--{w()}-{w()}` option",
                    f"Avoid panic in `{self.ident()}` on {w()} {w()}",
                    f"[{area}] Respect `{w()}` in {w()} {w()}",
                    f"Use `{self.ident()}` in the {w()} {w()}",
                    f"[{area}] Support {w()} {w()} in `{self.ident()}`",
                    f"Remove unused `{self.ident()}`",
                    f"[{area}] Speed up {w()} {w()} resolution",
                )
            )
        title += f" (#{self.pr})"
        body = ""
        if r.random() < 0.6:
            body = "## Summary\n\n" + " ".join(
                f"{w().title()} the {w()} {w()} so the {w()} {w()}s before {w()}." for _ in range(r.randint(1, 6))
            )
            if r.random() < 0.5:
                body += (
                    f"\n\nCloses #{self.pr - r.randint(10, 900)}.\n\n## Test Plan\n\n`cargo test` and a new snapshot."
                )
        return title, body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="rewrite bench/data/diff_sizes.json from DIR/<owner>+<name>/repo")
    parser.add_argument("--show", default="astral-sh/ruff", help="print a generated day's sizes for this sample")
    args = parser.parse_args()
    if args.mirrors:
        write_sizes(args.mirrors)
    from datetime import UTC

    day = make_day(300, datetime(2026, 1, 20, tzinfo=UTC), 280, sizes=load_sizes(args.show))
    print(f"{args.show}: {day.summary()}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
