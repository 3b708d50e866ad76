"""A repository whose days hold many kinds of change, released and with release notes to learn
from (for the "one commit, one level, everywhere" tests).

Eight weeks of squash-merged work from tests/taste_repo.py's START, each week released the next
Monday by a release PR that writes CHANGELOG.md and is tagged (0.1.0 … 0.8.0): a learned profile
judges the days under test. Then three days of varied work, 2026-03-31 to 2026-04-02 (UTC),
tagged 0.9.0 at the end: a new command line and a flag whose `add_argument` call spans lines, a
module moved (renamed with an edit), a binary file and an empty one, a public function removed,
a revert of the flag, a large rewrite with tests, a dependency's major bump, a crash fix told in
the body, a security check, docs. Every commit names its pull request, as squash merges do.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.gitrepo import GitRepo
from tests.taste_repo import START, Writer, render_changelog, source_lines, week_of_work

WEEKS = 8
DAYS = ("2026-03-31", "2026-04-01", "2026-04-02")
FIRST_TAG, LAST_TAG = f"0.{WEEKS}.0", f"0.{WEEKS + 1}.0"
_CLI = "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--verbose', action='store_true')\n"


def _at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, 31, hour, tzinfo=UTC) + timedelta(days=day)


def build(path: Path) -> GitRepo:
    repo = GitRepo(path, bare_origin="https://github.com/octo/resolver.git")
    w = Writer(repo)
    w.commit(
        f"Initial commit (#{w.pr()})", {"README.md": "resolver\n", "src/__init__.py": ""}, START - timedelta(days=1)
    )
    for week in range(WEEKS):
        monday = START + timedelta(weeks=week)
        listed: list[tuple[str, str]] = []
        week_of_work(w, monday, week, listed)
        w.changelog.append((f"0.{week + 1}.0", listed))
        w.commit(
            f"Release 0.{week + 1}.0 (#{w.pr()})",
            {"CHANGELOG.md": render_changelog(w.changelog)},
            monday + timedelta(weeks=1, hours=9),
        )
    w.flush()
    for line in repo.git("log", "--format=%H %s", "main").splitlines():
        sha, title = line.split(" ", 1)
        if title.startswith("Release "):
            repo.git("tag", title.split()[1], sha)
    _last_days(repo)
    repo.git("tag", LAST_TAG, "HEAD")
    return repo


def _last_days(repo: GitRepo) -> None:
    api = "def resolve(x):\n    return x\n\n\ndef legacy_resolve(x):\n    return x\n" + source_lines(30, "api")
    repo.commit("Add the command line (#900)", {"src/cli.py": _CLI, "src/api.py": api}, when=_at(0, 8))
    flag = repo.commit(
        "Add `--format changelog` option (#901)",
        {
            "src/cli.py": _CLI + "parser.add_argument(\n    '--format',\n    choices=['text', 'changelog'],\n)\n",
            "src/render/changelog.py": source_lines(60, "chg"),
        },
        when=_at(0, 10),
    )
    repo.git("mv", "src/resolver/markers_0.py", "src/resolver/markers.py")
    repo.commit(
        "Move the markers resolver into one module (#902)",
        {"src/resolver/markers.py": source_lines(2, "r0_0") + "\n\ndef extra(x):\n    return x\n"},
        when=_at(0, 11),
    )
    repo.commit(
        "Add the logo and a py.typed marker (#903)",
        {"assets/logo.png": bytes(range(256)) * 8, "src/py.typed": ""},
        when=_at(0, 12),
    )
    repo.commit(
        "Remove legacy_resolve (#904)\n\nlegacy_resolve was deprecated in 0.5.",
        {"src/api.py": "def resolve(x):\n    return x\n" + source_lines(30, "api")},
        when=_at(1, 9),
    )
    repo.commit(
        f'Revert "Add `--format changelog` option (#901)" (#905)\n\nThis reverts commit {flag}.',
        {"src/cli.py": _CLI, "src/render/changelog.py": None},
        when=_at(1, 10),
    )
    repo.commit(
        "Rewrite the lock file writer (#906)",
        {"src/lock/writer.py": source_lines(700, "lw"), "tests/test_writer.py": source_lines(100, "tw")},
        when=_at(1, 11),
    )
    repo.commit(
        "Bump httpx from 0.27 to 1.0 (#907)",
        {"pyproject.toml": "[project]\nname = 'resolver'\ndependencies = ['httpx>=1.0']\n"},
        when=_at(1, 12),
    )
    repo.commit(
        "Fix a crash when the lock file is empty (#908)\n\nThe resolver crashed with an IndexError when "
        "uv.lock had no packages.\nNow an empty lock file resolves to nothing.",
        {
            "src/lock/reader.py": "def read(text):\n    if not text.strip():\n        return []\n    return text.split()\n"
        },
        when=_at(2, 9),
    )
    repo.commit(
        "Verify the hash of downloaded wheels (#909)",
        {
            "src/download.py": "import hashlib\n\n\ndef verify(data, digest):\n"
            "    if hashlib.sha256(data).hexdigest() != digest:\n        raise ValueError('hash mismatch')\n"
            "    return data\n"
        },
        when=_at(2, 10),
    )
    repo.commit(
        "Document the --format option (#910)", {"docs/cli.md": "# CLI\n\n--format changelog\n"}, when=_at(2, 11)
    )
