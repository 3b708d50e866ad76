"""One digest for one day (issue 25, item 5): a finished window's digest is kept as first
published, and its fallbacks are retried later, off the readers' path, and improved in place.

  kept.py      where a kept digest was shown (chat messages, report pages) and when it is due
  refresh.py   what is retried, and a shown digest (or chat content) brought up to the kept one
  job.py       the improve pass: retry, compare-and-set the kept digest, redraw where it was shown
"""
