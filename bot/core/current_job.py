"""Which queued job this code runs in, if any (a context variable the job worker sets), and the
log filter that stamps it on every record.

On-demand deliveries derive their keys from it, so a request re-run after its worker died (or
Redis went away) resumes its digest instead of starting another.
"""

from __future__ import annotations

import contextvars
import logging

CURRENT_JOB: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_job", default=None)


class JobIdFilter(logging.Filter):
    """Adds `job` to log records: " [job-id]" while a queued job runs, else "" (and `job_id`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        job = CURRENT_JOB.get()
        record.job = f" [{job}]" if job else ""
        record.job_id = job  # LOG_FORMAT=json writes it as its own field
        return True
