"""What the CLI's commands share to talk to a terminal: the progress line on stderr, the `--out`
file (checked before a long run, written with a one-sentence failure) and the language of their
own stderr lines."""

from __future__ import annotations

import os
import sys

from settings import Settings

from ..core.models import UsageError
from ..i18n import phrase, text


class ProgressBar:
    """`analysing 12/31 [######....]` on stderr — only on a terminal, so pipes and CI stay clean."""

    def __init__(self, stream=sys.stderr, lang: str = "en"):
        self.stream = stream
        self.lang = lang
        self.enabled = stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        width = 30
        filled = int(width * done / total)
        self.stream.write(
            f"\r{text(self.lang, 'cli.analysing', done=done, total=total)} [{'#' * filled}{'.' * (width - filled)}]"
        )
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _check_out_path(path: str | None) -> None:
    """Fail before the (possibly long) analysis, not after it."""
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(phrase("cli.out_no_folder", path=path, folder=folder))
    if os.path.isdir(path):
        raise UsageError(phrase("cli.out_is_folder", path=path))
    if not os.access(folder, os.W_OK):
        raise UsageError(phrase("cli.out_no_permission", path=path, folder=folder))


def write_out(path: str, body: str) -> None:
    """Write the command's output to `path`; a failure is one sentence (exit 2), never a traceback."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(body)
    except OSError as exc:
        raise UsageError(phrase("cli.out_failed", path=path, reason=exc.strerror)) from None


def stderr_lang(args, settings: Settings) -> str:
    """The language of the CLI's own lines: the run's one language, `--lang` when given, else
    DEFAULT_LANG (as the digest it writes)."""
    return vars(args).get("lang") or settings.default_lang
