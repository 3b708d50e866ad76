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

from dataclasses import dataclass, replace
from urllib.parse import quote


@dataclass(frozen=True)
class LinkStyle:
    commit: str = "{repo_url}/commit/{sha}"
    change: str = "{repo_url}/pull/{number}"
    file: str = "{repo_url}/blob/{ref}/{path}"
    compare: str = "{repo_url}/compare/{base}...{head}"
    change_word: str = "pr"  # the labels catalogue's key: "PR", "MR"
    change_mark: str = "#"  # PR #12, MR !12

    # An empty template: the host has no such page (or it is not known): no link, never a broken one.
    def commit_url(self, repo_url: str | None, sha: str) -> str | None:
        return self.commit.format(repo_url=repo_url.rstrip("/"), sha=sha) if repo_url and sha and self.commit else None

    def change_url(self, repo_url: str | None, number: int | None) -> str | None:
        if not repo_url or not number or not self.change:
            return None
        return self.change.format(repo_url=repo_url.rstrip("/"), number=number)

    def file_url(self, repo_url: str | None, ref: str, path: str) -> str | None:
        if not repo_url or not ref or not path or not self.file:
            return None
        return self.file.format(repo_url=repo_url.rstrip("/"), ref=quote(ref, safe="/"), path=quote(path, safe="/"))

    def compare_url(self, repo_url: str | None, base: str, head: str) -> str | None:
        if not repo_url or not base or not head or not self.compare:
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

# Gitea and Forgejo (codeberg.org): `/pulls/N`, a file at a commit under `/src/commit/`.
GITEA_LINKS = LinkStyle(
    change="{repo_url}/pulls/{number}",
    file="{repo_url}/src/commit/{ref}/{path}",
)
GITEE_LINKS = LinkStyle(change="{repo_url}/pulls/{number}")  # gitee.com: GitHub's pages, `/pulls/N`
# Bitbucket Cloud: `/commits/SHA`, `/pull-requests/N`, `/src/REF/PATH`; its compare view takes
# the two refs in a form of its own, so no compare link rather than a wrong one.
BITBUCKET_LINKS = LinkStyle(
    commit="{repo_url}/commits/{sha}",
    change="{repo_url}/pull-requests/{number}",
    file="{repo_url}/src/{ref}/{path}",
    compare="",
)
NO_LINKS = LinkStyle(commit="", change="", file="", compare="")  # a host whose pages are not known

# The styles a setting may name (GIT_LINK_TEMPLATES), and the well-known hosts' own.
NAMED_STYLES = {
    "github": GITHUB_LINKS,
    "gitlab": GITLAB_LINKS,
    "gitea": GITEA_LINKS,
    "forgejo": GITEA_LINKS,
    "gitee": GITEE_LINKS,
    "bitbucket": BITBUCKET_LINKS,
    "none": NO_LINKS,
}  # the names settings.py's LINK_STYLES lets GIT_LINK_TEMPLATES use (tests/test_mirror_source.py holds them equal)
KNOWN_HOSTS = {
    "github.com": GITHUB_LINKS,
    "gitlab.com": GITLAB_LINKS,
    "gitee.com": GITEE_LINKS,
    "gitea.com": GITEA_LINKS,
    "codeberg.org": GITEA_LINKS,
    "bitbucket.org": BITBUCKET_LINKS,
}


def link_style_from_dict(d: dict | None) -> LinkStyle:
    if not isinstance(d, dict):
        return GITHUB_LINKS
    known = {k: str(v) for k, v in d.items() if k in LinkStyle.__dataclass_fields__ and isinstance(v, str)}
    return LinkStyle(**known)


WEB_URL = "{scheme}://{host}/{path}"  # a repository's web address by default (https for ssh)


def host_links(host: str, templates: dict) -> tuple[LinkStyle, str | None]:
    """How `host` links, and its repositories' web address template (None: not known, so no
    link at all): the operator's GIT_LINK_TEMPLATES first, then the well-known hosts."""
    host = host.lower()
    style = templates.get(host)
    if isinstance(style, str):
        named = NAMED_STYLES[style.lower()]
        return named, (None if named is NO_LINKS else WEB_URL)
    if isinstance(style, dict):
        known = {k: v for k, v in style.items() if k in LinkStyle.__dataclass_fields__}
        return replace(NO_LINKS, **known), style.get("repo_url", WEB_URL)
    if host in KNOWN_HOSTS:
        return KNOWN_HOSTS[host], WEB_URL
    return NO_LINKS, None
