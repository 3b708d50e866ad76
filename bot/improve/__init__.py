"""One digest for one day (issue 25, item 5): a finished window's digest is kept as first
published, and its fallbacks are retried later, off the readers' path, and improved in place.

  runner.py  the improve pass: retry, compare-and-set the kept digest, redraw where it was shown

Where a kept digest was shown is bot/digest/kept.py; what a pass retries, and a shown digest
brought up to the kept one, bot/digest/refresh.py (the builder uses both).
"""
