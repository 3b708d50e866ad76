"""Watches: a person's daily direct message with the analysis of every new commit of a repository
that touches a path pattern (`watch owner/repo GLOB [at 09:00]`).

  watch_store.py  who watches what (Redis), and when each watch is due
  spec.py     one watch's run for one day, as JSON a job queue can carry
  runner.py   that run: list, filter by the pattern, analyse through the digests' cache, send
              each commit once per person (keyed sends, crash-safe)
"""

from .watch_store import MAX_WATCHES, Watch, Watches

__all__ = ["MAX_WATCHES", "Watch", "Watches"]
