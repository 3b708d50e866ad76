"""Alerts: each new high-importance commit of a subscription's repository posted into its
conversation on its own, once, within one poll of landing (`subscribe owner/repo alerts high`).

  spec.py    what one poll is (JSON for the queue), keyed per period or per burst of pushes
  runner.py  one poll: list since the last, analyse through the digests' cache, send each high
             commit once (keyed sends, crash-safe), at most ALERT_MAX_PER_HOUR an hour

What they keep per conversation (the cursor, each commit's state) is bot/channels/alerted.py, so
the daily digest marks what was alerted without depending on this package.
"""
