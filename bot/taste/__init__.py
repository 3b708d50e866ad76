"""A repository's taste: what its maintainers announce, learned from its own release notes, PR
labels and the channel's corrections, and used to judge how much a commit matters.

  notes.py        release notes → which PR is listed under which heading (and what that heading means)
  examples.py     the repository's history as of a day → labelled examples (no peeking past that day)
  features.py     a commit → the words a model reads (title words, tags, touched areas, file kinds)
  model.py        the learned profile: a logistic regression over those words (scikit-learn: learning only)
  learn.py        one day's profile learnt, from scratch or from the day before's (what changed only)
  judge.py        a profile's weights judging a commit with numpy, the same numbers as scikit-learn's
  book.py         profiles per repository and day, kept in Redis, learnt ahead by the clock or in the
                  background, never on a reader's path (a day not learnt yet: the newest earlier one)
  corrections.py  the channel's "level too high / too low", stored per repository (one per person per commit)
  feedback_cli.py `python -m bot feedback import|export`: corrections as JSONL, the shape of eval labels
"""
