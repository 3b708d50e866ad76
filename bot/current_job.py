"""Which queued job this code runs in, if any (a context variable the job worker sets).

Log lines name it (bot/logs.py), and on-demand deliveries derive their keys from it, so a
request re-run after its worker died (or Redis went away) resumes its digest instead of
starting another.
"""
from __future__ import annotations

import contextvars

CURRENT_JOB: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_job", default=None)
