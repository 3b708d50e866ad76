"""The CLI's widgets repository."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")


def cli_repo(tmp_path):
    """Two commits on 2026-01-28 in Shanghai: a CSV export and its fix (test_cli's `repo`)."""
    r = GitRepo(tmp_path / "widgets")
    r.commit(
        "feat: add CSV export (#7)\n\nUsers asked for it.\n\nSigned-off-by: A <a@example.com>",
        {"src/export.py": "import csv\n\ndef export(rows):\n    return csv.writer(rows)\n"},
        when=datetime(2026, 1, 28, 9, 30, tzinfo=SH),
    )
    r.commit(
        "fix: handle empty rows in export",
        {
            "src/export.py": "import csv\n\ndef export(rows):\n"
            "    if not rows:\n        return None\n    return csv.writer(rows)\n"
        },
        when=datetime(2026, 1, 28, 18, 0, tzinfo=SH),
    )
    return r


def english_run(run):
    """`run` (conftest) with DEFAULT_LANG=en: for the tests that read the CLI's English lines. A
    run speaks one language, --lang else DEFAULT_LANG (zh by default): test_cli_clean.py holds that."""

    def invoke(*args: str, env: dict | None = None, **kw):
        return run(*args, env={"DEFAULT_LANG": "en", **(env or {})}, **kw)

    invoke.prefix = run.prefix  # type: ignore[attr-defined]
    invoke.base_env = run.base_env  # type: ignore[attr-defined]
    return invoke
