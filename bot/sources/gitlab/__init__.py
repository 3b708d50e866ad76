"""Commits and diffs of a GitLab project (gitlab.com or self-managed, GITLAB_URL), through python-gitlab.

- client.py — the only module importing python-gitlab: the pool of clients, the shared rate-limit
  gate and retries (bot/sources/ratelimit.py, as GitHub's), every failure said in one sentence;
- source.py — `GitLabSource`: commits, diffs, merge requests, tags and compare, and what the
  learned profile reads;
- convert.py — GitLab's JSON turned into our models.

Nothing is imported here: the registry (bot/sources/registry.py) opens `gitlab.source` when a
GitLab project is named, so naming one costs nothing until then.
"""
