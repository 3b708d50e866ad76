"""How a repository's host links to its web pages: a commit, a pull/merge request, a file at a
ref, a compare view. Each commit source carries its host's `LinkStyle` (bot/sources/registry.py);
a digest keeps the style it was built with, so every surface (Slack, Feishu, Markdown, JSON, the
report page) links the way the host does — `/pull/N` on GitHub, `/-/merge_requests/N` on GitLab —
without knowing which host it is.

The templates are relative to the repository's web URL (`{repo_url}`); a style also says what the
host calls a change request (the catalogue's `labels.pr` or `labels.mr`) and how it numbers it
(`#12` on GitHub, `!12` on GitLab).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class LinkStyle:
    commit: str = "{repo_url}/commit/{sha}"
    change: str = "{repo_url}/pull/{number}"
    file: str = "{repo_url}/blob/{ref}/{path}"
    compare: str = "{repo_url}/compare/{base}...{head}"
    change_word: str = "pr"  # the labels catalogue's key: "PR", "MR"
    change_mark: str = "#"  # PR #12, MR !12

    def commit_url(self, repo_url: str | None, sha: str) -> str | None:
        return self.commit.format(repo_url=repo_url.rstrip("/"), sha=sha) if repo_url and sha else None

    def change_url(self, repo_url: str | None, number: int | None) -> str | None:
        return self.change.format(repo_url=repo_url.rstrip("/"), number=number) if repo_url and number else None

    def file_url(self, repo_url: str | None, ref: str, path: str) -> str | None:
        if not repo_url or not ref or not path:
            return None
        return self.file.format(repo_url=repo_url.rstrip("/"), ref=quote(ref, safe="/"), path=quote(path, safe="/"))

    def compare_url(self, repo_url: str | None, base: str, head: str) -> str | None:
        if not repo_url or not base or not head:
            return None
        return self.compare.format(
            repo_url=repo_url.rstrip("/"), base=quote(base, safe="/"), head=quote(head, safe="/")
        )

    def change_ref(self, number: int) -> str:
        return f"{self.change_mark}{number}"


GITHUB_LINKS = LinkStyle()  # also the style of digests kept before styles were kept
GITLAB_LINKS = LinkStyle(
    commit="{repo_url}/-/commit/{sha}",
    change="{repo_url}/-/merge_requests/{number}",
    file="{repo_url}/-/blob/{ref}/{path}",
    compare="{repo_url}/-/compare/{base}...{head}",
    change_word="mr",
    change_mark="!",
)


def link_style_from_dict(d: dict | None) -> LinkStyle:
    if not isinstance(d, dict):
        return GITHUB_LINKS
    known = {k: str(v) for k, v in d.items() if k in LinkStyle.__dataclass_fields__ and isinstance(v, str)}
    return LinkStyle(**known)
