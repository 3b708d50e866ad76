"""`python -m bot backup FILE` and `python -m bot restore FILE` (argparse is in bot/__main__.py).

FILE `-` is stdout (backup) or stdin (restore). A backup is written to `FILE.partial` and renamed
when whole, so a failed or interrupted backup never leaves a file that looks finished. The
command's own lines go to stderr in `--lang`, else DEFAULT_LANG; every failure is one sentence.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from settings import Settings

from ..backup import file_format, transfer
from ..core.models import UsageError
from ..core.store import open_store
from ..i18n import Count, phrase, text
from .terminal import _check_out_path, stderr_lang


def _bot_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("digest-bot")
    except PackageNotFoundError:
        return "unknown"


async def backup_command(args, settings: Settings) -> int:
    lang = stderr_lang(args, settings)
    to_stdout = args.file == "-"
    if not to_stdout:
        _check_out_path(args.file)
    started = time.perf_counter()
    store = open_store(settings)
    try:
        taken = await transfer.take(store, bot_version=_bot_version(), now=datetime.now(UTC))
    finally:
        await store.close()
    if to_stdout:
        sys.stdout.buffer.write(taken.data)
        sys.stdout.buffer.flush()
    else:
        _write(args.file, taken.data)
    seconds = f"{time.perf_counter() - started:.2f}"
    where = "stdout" if to_stdout else args.file
    keys = Count(taken.keys, "counts.key").say(lang)
    print(
        text(lang, "backup.wrote", path=where, keys=keys, size=f"{len(taken.data):,}", seconds=seconds), file=sys.stderr
    )
    return 0


def _write(path: str, data: bytes) -> None:
    """Whole or not at all: written beside, then renamed over `path`."""
    partial = path + ".partial"
    try:
        Path(partial).write_bytes(data)
        os.replace(partial, path)
    except OSError as exc:
        Path(partial).unlink(missing_ok=True)
        raise UsageError(phrase("cli.out_failed", path=path, reason=exc.strerror)) from None


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(phrase("backup.file_missing", path=path)) from None
    except IsADirectoryError:
        raise UsageError(phrase("cli.out_is_folder", path=path)) from None
    except OSError as exc:
        raise UsageError(phrase("backup.unreadable", path=path, reason=exc.strerror)) from None


async def restore_command(args, settings: Settings) -> int:
    lang = stderr_lang(args, settings)
    started = time.perf_counter()
    name = "stdin" if args.file == "-" else args.file
    found = file_format.read(_read(args.file), name)  # every check before Redis is touched
    store = open_store(settings)
    try:
        done = await transfer.restore(store, found, force=args.force, now=datetime.now(UTC))
    finally:
        await store.close()
    seconds = f"{time.perf_counter() - started:.2f}"
    keys = Count(done.keys, "counts.key").say(lang)
    print(
        text(lang, "backup.restored", path=name, keys=keys, created=found.header["created"], seconds=seconds),
        file=sys.stderr,
    )
    return 0
