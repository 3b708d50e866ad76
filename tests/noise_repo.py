"""A real git monorepo with a noisy week, for the noise-control and roll-up tests: people's changes
under frontend/ and backend/, Renovate updating Cargo.lock fourteen times in one day, Dependabot
bumping a workflow action, an automation bot that writes code, and a pile of docs fixes.

Written with `git fast-import` (dozens of commits in a fraction of a second)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 28)  # a Wednesday; its ISO week is 2026-01-26..2026-02-01
WEEK_MONDAY = date(2026, 1, 26)
CRATES = [
    "clap",
    "tokio",
    "serde",
    "serde_json",
    "anyhow",
    "thiserror",
    "regex",
    "rayon",
    "tracing",
    "url",
    "reqwest",
    "indexmap",
    "toml",
    "walkdir",
]
OLD = {name: f"1.{i}.0" for i, name in enumerate(CRATES)}
NEW = {name: f"1.{i}.1" for i, name in enumerate(CRATES)}
OLD["clap"], NEW["clap"] = "4.5.53", "4.5.54"
HIGH_TITLE = "feat(frontend)!: drop the legacy router"
MEDIUM_TITLE = "feat: add a --since flag to the backend CLI"
MONDAY_HIGH = "feat(backend)!: remove the v1 export endpoint"
# Says no kind of change (a fix of shipped code would be medium): the bot's code is a low like anyone's.
AUTOMATION_TITLE = "Sync the backend worker from its template"
DOCS_LOWS = 20


@dataclass
class Change:
    message: str
    when: datetime
    files: dict[str, str | None]
    author: str = "Ada Lovelace"
    email: str = "ada@example.com"


@dataclass
class Monorepo:
    repo: GitRepo
    shas: dict[str, str] = field(default_factory=dict)

    @property
    def path(self):
        return self.repo.path


def cargo_lock(versions: dict[str, str]) -> str:
    return "version = 4\n\n" + "".join(
        f'[[package]]\nname = "{n}"\nversion = "{v}"\nsource = "registry+https://github.com/'
        f'rust-lang/crates.io-index"\n\n'
        for n, v in versions.items()
    )


def fast_commits(repo: GitRepo, changes: list[Change]) -> list[str]:
    """Commit each change on main in order (whole file contents; None deletes), returning SHAs."""
    lines: list[bytes] = []
    for i, c in enumerate(changes, 1):
        stamp = f"{int(c.when.timestamp())} {c.when.strftime('%z')}"
        message = (c.message + "\n").encode()
        lines += [
            b"commit refs/heads/main",
            f"mark :{i}".encode(),
            f"author {c.author} <{c.email}> {stamp}".encode(),
            f"committer {c.author} <{c.email}> {stamp}".encode(),
            f"data {len(message)}".encode(),
            message,
        ]
        for path, content in c.files.items():
            if content is None:
                lines.append(f"D {path}".encode())
            else:
                data = content.encode()
                lines += [f"M 100644 inline {path}".encode(), f"data {len(data)}".encode(), data]
    subprocess.run(
        ["git", "-C", str(repo.path), "fast-import", "--quiet"],
        input=b"\n".join(lines) + b"\n",
        check=True,
        capture_output=True,
    )
    marks = repo.git("log", "--format=%H", "--reverse", "main").split()
    return marks[-len(changes) :]


def build_monorepo(path) -> Monorepo:
    repo = GitRepo(path, bare_origin="https://github.com/acme/mono.git")
    at = lambda d, h, m=0: datetime(d.year, d.month, d.day, h, m, tzinfo=SH)  # noqa: E731
    wf_old = "jobs:\n  test:\n    steps:\n      - uses: actions/checkout@1111111 # v4.1.0\n"
    wf_new = "jobs:\n  test:\n    steps:\n      - uses: actions/checkout@2222222 # v5.0.0\n"
    router = "export function route(path) {\n  return legacyRoute(path);\n}\n\nexport function legacyRoute(p) {\n  return p;\n}\n"
    api = "def export_v1(rows):\n    return rows\n\n\ndef export_v2(rows):\n    return list(rows)\n"
    cli = "import argparse\nparser = argparse.ArgumentParser()\n"
    changes = [
        Change(
            "init",
            at(WEEK_MONDAY - timedelta(days=1), 9),
            {
                "frontend/router.ts": router,
                "backend/api.py": api,
                "backend/cli.py": cli,
                "backend/worker.py": "def run(batch):\n    return [x for x in batch]\n",
                "Cargo.lock": cargo_lock(OLD),
                ".github/workflows/ci.yml": wf_old,
                "docs/guide.md": "# Guide\n",
            },
        )
    ]
    names = ["init"]
    # Monday: a breaking backend change (high); Tuesday: a frontend test (low)
    changes.append(
        Change(
            f"{MONDAY_HIGH}\n\nBREAKING CHANGE: export_v1 is gone.",
            at(WEEK_MONDAY, 10),
            {"backend/api.py": "def export_v2(rows):\n    return list(rows)\n"},
        )
    )
    names.append("monday_high")
    changes.append(
        Change(
            "test: cover the router",
            at(WEEK_MONDAY + timedelta(days=1), 15),
            {"frontend/tests/router.test.ts": "test('route', () => {});\n"},
        )
    )
    names.append("tuesday_low")
    # Wednesday, the noisy day
    day = DAY
    changes.append(
        Change(
            f"{HIGH_TITLE}\n\nBREAKING CHANGE: legacyRoute is gone.",
            at(day, 9),
            {"frontend/router.ts": "export function route(path) {\n  return path;\n}\n"},
        )
    )
    names.append("high")
    changes.append(
        Change(
            MEDIUM_TITLE,
            at(day, 9, 30),
            {"backend/cli.py": cli + "parser.add_argument('--since', help='only recent rows')\n"},
        )
    )
    names.append("medium")
    versions = dict(OLD)
    for i, crate in enumerate(CRATES):
        versions[crate] = NEW[crate]
        changes.append(
            Change(
                f"Update Rust crate {crate} to v{NEW[crate]} (#{100 + i})",
                at(day, 10, i),
                {"Cargo.lock": cargo_lock(versions)},
                author="renovate[bot]",
                email="29139614+renovate[bot]@users.noreply.github.com",
            )
        )
        names.append(f"renovate_{crate}")
    changes.append(
        Change(
            "Bump actions/checkout from 4 to 5",
            at(day, 11),
            {".github/workflows/ci.yml": wf_new},
            author="dependabot[bot]",
            email="49699333+dependabot[bot]@users.noreply.github.com",
        )
    )
    names.append("dependabot")
    for i in range(DOCS_LOWS):
        changes.append(
            Change(
                f"docs: fix typo {i} in the guide",
                at(day, 12, i),
                {"docs/guide.md": "# Guide\n" + "".join(f"line {j}\n" for j in range(i + 1))},
                author="Grace Hopper",
                email="grace@example.com",
            )
        )
        names.append(f"docs_{i}")
    changes.append(
        Change(
            AUTOMATION_TITLE,
            at(day, 13),
            {
                "backend/worker.py": "def run(batch):\n    if not batch:\n        return []\n"
                "    return [x for x in batch]\n"
            },
            author="automation-bot[bot]",
            email="automation-bot@example.com",
        )
    )
    names.append("automation")
    shas = fast_commits(repo, changes)
    repo.git("checkout", "-q", "-f", "main")
    return Monorepo(repo, dict(zip(names, shas)))


# What the day holds, for assertions
DAY_COMMITS = 3 + len(CRATES) + 1 + DOCS_LOWS  # high, medium, automation bot, renovate, dependabot, docs
WEEK_COMMITS = DAY_COMMITS + 2
