"""What the bot's log lines carry beyond the message: the job they were written in."""
from __future__ import annotations

import logging

from .current_job import CURRENT_JOB


class JobIdFilter(logging.Filter):
    """Adds `job` to log records: " [job-id]" while a queued job runs, else ""."""

    def filter(self, record: logging.LogRecord) -> bool:
        job = CURRENT_JOB.get()
        record.job = f" [{job}]" if job else ""
        return True
