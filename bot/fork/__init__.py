"""Downstream impact: what each upstream commit of a digest means for a fork that patches it.

    spec = parse_fork("org/our-fork@main", lang)        # or "/path/to/checkout@branch"
    digest = await read_downstream(digest, source, spec, settings)

`naming.py` names forks, `mirror.py` keeps GitHub forks as bounded mirrors under DATA_DIR,
`git.py` reads two object stores together without writing to either, `patches.py` reads the
fork's own changes, `conflict.py` predicts cherry-pick conflicts (git ≥ 2.40, 2.38–2.39 and older
each their own way), `annotate.py` puts it together for a digest.
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

from settings import Settings

from ..core.models import Digest, NotFoundError, UsageError
from ..i18n import phrase
from .annotate import check_fork
from .naming import ForkError, ForkNotFound, ForkSpec, parse_fork

__all__ = ["ForkError", "ForkNotFound", "ForkSpec", "check_fork", "cli_usage", "parse_fork", "read_downstream"]


@contextmanager
def cli_usage(lang: str):
    """Bad fork input on the command line: the sentence, then the `--fork` usage, on one line
    (said in --lang by the CLI, as every error)."""
    try:
        yield
    except (ForkError, ForkNotFound) as exc:
        error = NotFoundError if isinstance(exc, ForkNotFound) else UsageError
        raise error(
            phrase("downstream.with_usage", sentence=exc.args[0], usage=phrase("downstream.usage_cli"))
        ) from None


async def read_downstream(
    digest: Digest, source, spec: ForkSpec, settings: Settings, lang: str | None = None
) -> Digest:
    """`digest` with its entries' `downstream` and its `fork` set (git work off the event loop)."""
    from ..sources.registry import fetch_spec
    from .annotate import annotate
    from .mirror import git_tokens

    fetched = [spec.where] if spec.kind != "path" else []
    if not getattr(source, "path", None):  # a remote upstream is fetched into a mirror too
        fetched.append(fetch_spec(source))
    tokens = await git_tokens(settings, fetched)
    return await asyncio.to_thread(annotate, digest, source, spec, settings, lang, tokens)
