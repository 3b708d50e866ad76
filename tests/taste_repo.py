"""A repository whose maintainers publish weekly release notes (for the learned-profile tests).

Every week from START: fixes in `src/resolver/` listed under "Bug fixes", new options in
`src/cli.py` under "Features", doc edits under "Documentation", and panel rewrites (big
source changes in `src/panels/`) and CI bumps that the notes never list. A release commit each
Monday at 09:00 UTC writes the previous week's entries into CHANGELOG.md.

Written with `git fast-import`: hundreds of commits in a fraction of a second.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta

from tests.gitrepo import GitRepo

START = datetime(2026, 2, 2, tzinfo=UTC)  # a Monday
THINGS = ["markers", "extras", "wheels", "pins", "locks", "groups", "sources", "hashes", "urls", "tags"]


class Writer:
    """Commits through fast-import, each with its own files and instant."""

    def __init__(self, repo: GitRepo):
        self.repo = repo
        self.lines: list[bytes] = []
        self.first = True
        self.number = 100
        self.changelog: list[tuple[str, list[tuple[str, str]]]] = []  # (version, [(heading, line)])

    def commit(self, message: str, files: dict[str, str], when: datetime) -> None:
        stamp = int(when.timestamp())
        data = (message + "\n").encode()
        self.lines += [
            b"commit refs/heads/main",
            f"author Ada <ada@example.com> {stamp} +0000".encode(),
            f"committer Ada <ada@example.com> {stamp} +0000".encode(),
            f"data {len(data)}".encode(),
            data,
        ]
        if self.first:
            self.first = False
        for path, content in files.items():
            body = content.encode()
            self.lines += [f"M 100644 inline {path}".encode(), f"data {len(body)}".encode(), body]

    def pr(self) -> int:
        self.number += 1
        return self.number

    def flush(self) -> None:
        stream = b"\n".join(self.lines) + b"\n"
        subprocess.run(
            ["git", "-C", str(self.repo.path), "fast-import", "--quiet", "--force"],
            input=stream,
            check=True,
            capture_output=True,
        )
        self.lines = []
        self.repo.git("reset", "-q", "--hard", "main")


def source_lines(n: int, seed: str) -> str:
    return "".join(f"def {seed}_{i}(x):\n    return x + {i}\n" for i in range(n))


def render_changelog(releases: list[tuple[str, list[tuple[str, str]]]]) -> str:
    out = ["# Changelog", ""]
    for version, entries in reversed(releases):
        out += [f"## {version}", ""]
        for heading in ("Breaking changes", "Bug fixes", "Features", "Documentation"):
            lines = [line for h, line in entries if h == heading]
            if lines:
                out += [f"### {heading}", ""] + [f"- {line}" for line in lines] + [""]
    return "\n".join(out)


def week_of_work(w: Writer, monday: datetime, week: int, listed: list[tuple[str, str]]) -> None:
    """One week's commits (Tuesday to Friday); what the notes will list goes into `listed`."""
    t = monday + timedelta(days=1, hours=9)
    for i, thing in enumerate(THINGS[:6]):
        n = w.pr()
        name = THINGS[(i + week) % len(THINGS)]
        w.commit(
            f"Handle {name} in the resolver (#{n})",
            {f"src/resolver/{name}_{week}.py": source_lines(2, f"r{week}_{i}")},
            t,
        )
        listed.append(("Bug fixes", f"Handle {name} in the resolver ([#{n}](https://example.com/pull/{n}))"))
        t += timedelta(hours=2)
        n = w.pr()
        w.commit(
            f"[panels] Rework the {thing} panel (#{n})",
            {f"src/panels/{thing}_{week}.py": source_lines(150, f"p{week}_{i}")},
            t,
        )
        t += timedelta(hours=2)
    for i in range(2):
        n = w.pr()
        w.commit(
            f"Add `--{THINGS[i + week % 5]}-only` option (#{n})",
            {f"src/cli/{THINGS[i + week % 5]}_{week}.py": source_lines(3, f"c{week}_{i}")},
            t,
        )
        listed.append(("Features", f"Add `--{THINGS[i + week % 5]}-only` option (#{n})"))
        t += timedelta(hours=3)
        n = w.pr()
        w.commit(f"Update docs for {THINGS[i]} (#{n})", {f"docs/{THINGS[i]}.md": f"week {week}\n"}, t)
        listed.append(("Documentation", f"Update docs for {THINGS[i]} (#{n})"))
        t += timedelta(hours=3)
        n = w.pr()
        w.commit(f"Bump actions/checkout (#{n})", {".github/workflows/ci.yml": f"v{week}{i}\n"}, t)


def build(path, weeks: int = 8) -> GitRepo:
    """`weeks` weeks of work from START, each released the next Monday."""
    repo = GitRepo(path)
    w = Writer(repo)
    w.commit("Initial commit", {"README.md": "demo\n", "src/__init__.py": ""}, START - timedelta(days=1))
    for week in range(weeks):
        monday = START + timedelta(weeks=week)
        listed: list[tuple[str, str]] = []
        week_of_work(w, monday, week, listed)
        w.changelog.append((f"0.{week + 1}.0", listed))
        release_at = monday + timedelta(weeks=1, hours=9)
        w.commit(f"Release 0.{week + 1}.0", {"CHANGELOG.md": render_changelog(w.changelog)}, release_at)
    w.flush()
    return repo


def release_everything_as_breaking(repo: GitRepo, when: datetime) -> None:
    """A later release whose notes relabel every panel rewrite as a breaking change: a
    profile that peeked at it would judge earlier weeks differently."""
    log = repo.git("log", "--format=%s", "main")
    playground = [line for line in log.splitlines() if line.startswith("[panels]")]
    body = "# Changelog\n\n## 9.0.0\n\n### Breaking changes\n\n" + "".join(f"- {title}\n" for title in playground)
    repo.commit("Release 9.0.0", {"CHANGELOG.md": body}, when=when)
