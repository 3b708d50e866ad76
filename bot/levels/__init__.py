"""Readers' level corrections where digests are shown (issue 24, item 3; the storage is
bot/taste/corrections.py).

  overlay.py   a digest (or a chat content) with the corrections in force laid over it
  posted.py    what each posted digest message showed, so a tap can redraw it in place
  taps.py      a "level too high / too low" tap from any chat platform
"""
