"""What the patches and paths show beyond line counts, gathered into one `DiffFacts`: each field
is read by the evidence module it belongs to, from the scanners in patch.py."""

from __future__ import annotations

from ..repo_config import RepoProfile
from .context import DiffFacts
from .evidence import behaviour, breaking, dependencies, release, removal, security
from .scan import scan_source
from .stats import FileStats
from .title import TitleInfo


def diff_facts(stats: FileStats, title: TitleInfo, profile: RepoProfile | None = None) -> DiffFacts:
    profile = profile or RepoProfile.inferred()
    scan = scan_source(stats, profile, bounds_wanted=title.pathology)
    removed_api, in_removed_files = removal.removed_api(scan.removed_defs, scan.added_defs)
    kept = removal.still_spelled(stats, removed_api) if removed_api else set()
    renamed = [(old, new) for old, new in scan.renamed_defs.items() if old in removed_api and old not in kept]
    removed_api = [n for n in removed_api if n not in kept and n not in scan.renamed_defs]
    checks = security.refusal_checks(stats, profile)
    return DiffFacts(
        removed_api=tuple(removed_api),
        removed_api_in_removed_files=in_removed_files,
        renamed_api=tuple(renamed),
        removed_flags=tuple(sorted(scan.flags_removed)),  # each call read whole: a split call removes nothing
        added_flags=tuple(sorted(scan.flags_added - scan.hidden_flags)),  # a hidden flag is not for users
        default_changes=tuple(behaviour.default_changes(stats, profile)),
        security_paths=tuple(security.sensitive_paths(stats, profile)),
        refusals=tuple(dict.fromkeys(path for path, _, _ in checks)),
        refusal_checks=tuple(checks),
        gpu_kernels=tuple(behaviour.gpu_kernels(stats)),
        moved_modules=tuple(removal.moved_modules(stats, profile)),
        removed_surface_files=tuple(removal.removed_surface_files(stats, profile)),
        grown_returns=tuple(breaking.grown_returns(stats, profile)),
        dropped_exports=tuple(removal.dropped_exports(stats, profile, scan.added_defs)),
        release_edits=tuple(release.release_edits(stats, profile, title.ci_declared)),
        surface_kinds=tuple(behaviour.surface_kinds(stats, profile)),
        hunk_names=tuple(scan.hunk_names[:6]),
        flags_changed=tuple(scan.flags_changed()),
        packaged_modules=tuple(removal.packaged_modules(stats)),
        deltas=tuple(scan.deltas),
        tests_added=tuple(scan.tests_added),
        headings_added=tuple(scan.headings_added),
        env_added=tuple(scan.env_added),
        bounds_work=scan.bounds_work,
        **dependencies.read(stats, title, profile),
    )
