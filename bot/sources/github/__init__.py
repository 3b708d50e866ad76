"""Commits and diffs of a GitHub (or GitHub Enterprise) repository, through PyGithub.

- client.py — the only module importing PyGithub: the pool of clients (one per worker thread),
  our retries and the shared rate-limit gate, every failure said in one sentence;
- source.py — `GitHubSource`, everything asked of GitHub: commits, files, PR descriptions, and
  what the learned profile (bot/taste) reads — the tip before a week, changelog paths, history,
  releases, PR labels;
- convert.py — PyGithub's objects and GraphQL answers turned into our models;
- installations.py — a GitHub App's installation tokens, kept in Redis for every process, and
  app_jwt.py — its JWT (the only PyJWT import).
"""

from __future__ import annotations

from .client import rate_limit_reset
from .convert import pr_context
from .source import GitHubSource

__all__ = ["GitHubSource", "pr_context", "rate_limit_reset"]
