"""Readers' level corrections where digests are shown (issue 24, item 3; the storage is
bot/taste/corrections.py).

  overlay.py   a digest (or a chat content) with the corrections in force laid over it

What each posted digest message showed is bot/delivery/posted.py; a reader's tap is
bot/conversation/level_taps.py.
"""
