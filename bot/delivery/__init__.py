"""A digest into one conversation.

post.py   the messages: a parent (title, stats, headline, high items), then in its thread one
          reply per high/medium commit and the low ones grouped — resumable step by step, and
          never posted twice (keyed sends, read-back after the platform's dedupe window)
spec.py   what one delivery is (JSON, queueable), and the one subscription → delivery mapping
runner.py the delivery as a resumable job, the same for a scheduled push and a `/digest`: its
          spec (JSON, queueable), one runner at a time (a lease), the "building…" line and its
          progress edits, the ledger of scheduled pushes, retries and the failure notice
"""
