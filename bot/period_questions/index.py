"""The embedded full-text index of analysed commits: SQLite FTS5 in a file under DATA_DIR (the
only sqlite3 importer).

One row per (repository, language, commit): its title, the symbols and paths it touches, the
parts of those paths (each directory, crate or package name and file stem once), its analysis
(summary, reason, impact, risks) when one is cached, its message and PR text, and the Chinese
pairs of all of those (see terms.py). BM25 ranks with per-column weights: a word in the title or
in a touched directory's name says more than one in a long PR description.

The index is a cache of the commits and of what the Redis analysis cache holds: a row carries the
analysis tag (model + prompt + rules version) it was built from — with BARE appended when no
analysis was cached then — and a row with another tag, or a bare row whose analysis has since
been cached, is rebuilt. A
file that cannot be opened or has an old layout is rebuilt from scratch, never a failure. Each
process opens its own connection per call (WAL mode, a busy timeout), off the event loop.

Another search engine plugs in by implementing the same three methods (`indexed`, `upsert`,
`search`); this one needs nothing installed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA_VERSION = "3"
COLUMNS = ("title", "symbols", "paths", "parts", "summary", "body", "cjk")
RETRY = ":retry"  # tag suffix of a row built from a fallback analysis (or without the commit's files)
BARE = ":bare"  # tag suffix of a row built from the commit alone (no analysis was cached)
RETRY_AFTER = 3600.0  # seconds such a row is used before its commit is analysed again
# BM25 weights per column, in COLUMNS order: chosen on the tuning half of the astral-sh/ruff
# questions (bench/eval_history.py --labels tests/data/history_questions_ruff.jsonl --tune),
# without analyses (many settings tie; a title word counting most is what they share). A touched
# directory's name counted once per commit is what beats a word repeated in a long message.
WEIGHTS = (8.0, 1.0, 0.5, 1.0, 2.0, 0.25, 1.0)


INDEX_FILE = "history.sqlite3"  # under DATA_DIR


@dataclass(frozen=True)
class Document:
    sha: str
    committed_at: float  # epoch seconds
    tag: str  # the analysis tag the row was built from
    title: str
    symbols: str
    paths: str
    parts: str
    summary: str
    body: str
    cjk: str
    meta: dict  # what the answer shows: title, url, summary, importance, change_type, pr


@dataclass(frozen=True)
class Hit:
    sha: str
    score: float  # higher is better
    meta: dict


class HistoryIndex:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()  # one writer per process; SQLite serialises processes
        self._ready = False

    # --- public (async: the work runs in a thread) ---------------------------------------------
    async def indexed(self, repo: str, lang: str, shas: Sequence[str], tag: str) -> set[str]:
        """The SHAs among `shas` already indexed from an analysis with this tag — or from a
        fallback made with it less than RETRY_AFTER ago (an LLM that failed on a commit is not
        asked again by every question about its period)."""
        return await asyncio.to_thread(self._indexed, repo, lang, list(shas), tag, time.time())

    async def states(self, repo: str, lang: str, shas: Sequence[str]) -> dict[str, tuple[str, float]]:
        """(tag, when written) of the rows of these commits that exist."""
        return await asyncio.to_thread(self._states, repo, lang, list(shas))

    async def upsert(self, repo: str, lang: str, docs: Iterable[Document]) -> None:
        await asyncio.to_thread(self._upsert, repo, lang, list(docs))

    async def search(
        self,
        repo: str,
        lang: str,
        match: str,
        shas: Iterable[str],
        limit: int,
        between: tuple[float, float],
        weights: Sequence[float] = WEIGHTS,
    ) -> list[Hit]:
        """The best `limit` of `shas` (committed `between` two epoch instants) for the FTS5
        expression `match`, best first."""
        return await asyncio.to_thread(self._search, repo, lang, match, set(shas), limit, between, tuple(weights))

    async def metas(self, repo: str, lang: str, shas: Sequence[str]) -> dict[str, dict]:
        """The stored display fields of these commits (for a question that names no topic)."""
        return await asyncio.to_thread(self._metas, repo, lang, list(shas))

    # --- internals -------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA busy_timeout = 30000")
        if not self._ready:
            self._prepare(db)
        return db

    def _prepare(self, db: sqlite3.Connection) -> None:
        with self._lock:
            if self._ready:
                return
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:
                # An older layout: the index is a cache, rebuilt from the analyses as asked.
                db.execute("DROP TABLE IF EXISTS docs")
                db.execute("DROP TABLE IF EXISTS rows")
            db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5({', '.join(COLUMNS)}, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS rows (repo TEXT NOT NULL, lang TEXT NOT NULL, sha TEXT NOT NULL, "
                "ts REAL NOT NULL, tag TEXT NOT NULL, meta TEXT NOT NULL, doc INTEGER NOT NULL, "
                "at REAL NOT NULL, "
                "PRIMARY KEY (repo, lang, sha))"
            )
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
            self._ready = True

    def _indexed(self, repo: str, lang: str, shas: list[str], tag: str, now: float) -> set[str]:
        found: set[str] = set()
        with closing(self._connect()) as db:
            for start in range(0, len(shas), 500):
                part = shas[start : start + 500]
                marks = ",".join("?" * len(part))
                found |= {
                    sha
                    for (sha,) in db.execute(
                        f"SELECT sha FROM rows WHERE repo = ? AND lang = ? AND sha IN ({marks}) "
                        "AND (tag = ? OR (tag = ? AND at > ?))",
                        (repo, lang, *part, tag, tag + RETRY, now - RETRY_AFTER),
                    )
                }
        return found

    def _states(self, repo: str, lang: str, shas: list[str]) -> dict[str, tuple[str, float]]:
        out: dict[str, tuple[str, float]] = {}
        with closing(self._connect()) as db:
            for start in range(0, len(shas), 500):
                part = shas[start : start + 500]
                marks = ",".join("?" * len(part))
                for sha, tag, at in db.execute(
                    f"SELECT sha, tag, at FROM rows WHERE repo = ? AND lang = ? AND sha IN ({marks})",
                    (repo, lang, *part),
                ):
                    out[sha] = (tag, at)
        return out

    def _upsert(self, repo: str, lang: str, docs: list[Document]) -> None:
        if not docs:
            return
        now = time.time()
        with closing(self._connect()) as db, self._lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                for d in docs:
                    old = db.execute(
                        "SELECT doc FROM rows WHERE repo = ? AND lang = ? AND sha = ?", (repo, lang, d.sha)
                    ).fetchone()
                    if old is not None:
                        db.execute("DELETE FROM docs WHERE rowid = ?", old)
                    cur = db.execute(
                        f"INSERT INTO docs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                        tuple(getattr(d, c) for c in COLUMNS),
                    )
                    db.execute(
                        "INSERT OR REPLACE INTO rows (repo, lang, sha, ts, tag, meta, doc, at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            repo,
                            lang,
                            d.sha,
                            d.committed_at,
                            d.tag,
                            json.dumps(d.meta, ensure_ascii=False),
                            cur.lastrowid,
                            now,
                        ),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _search(
        self,
        repo: str,
        lang: str,
        match: str,
        shas: set[str],
        limit: int,
        between: tuple[float, float],
        weights: tuple[float, ...],
    ) -> list[Hit]:
        if not match or not shas:
            return []
        marks = ", ".join("?" * len(COLUMNS))
        with closing(self._connect()) as db:
            try:
                rows = db.execute(
                    f"SELECT r.sha, bm25(docs, {marks}) AS score, r.meta FROM docs JOIN rows r ON r.doc = docs.rowid "
                    "WHERE docs MATCH ? AND r.repo = ? AND r.lang = ? AND r.ts >= ? AND r.ts < ? ORDER BY score",
                    (*weights, match, repo, lang, *between),
                ).fetchall()
            except sqlite3.OperationalError as exc:  # a query FTS5 cannot parse: nothing matches it
                log.info("history search %r refused by FTS5: %s", match, exc)
                return []
        hits = [Hit(sha, -score, json.loads(meta)) for sha, score, meta in rows if sha in shas]
        return hits[:limit]

    def _metas(self, repo: str, lang: str, shas: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        with closing(self._connect()) as db:
            for start in range(0, len(shas), 500):
                part = shas[start : start + 500]
                marks = ",".join("?" * len(part))
                for sha, meta in db.execute(
                    f"SELECT sha, meta FROM rows WHERE repo = ? AND lang = ? AND sha IN ({marks})", (repo, lang, *part)
                ):
                    out[sha] = json.loads(meta)
        return out
