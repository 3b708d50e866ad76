"""A mirror's size bound hit cleanly: a repository bigger than MIRROR_MAX_MB, served over HTTP by
git's own `git http-backend` (tests/fakes/git_http.py), named by its URL; the bot's fetch into
its mirror is watched while it downloads.

    .venv/bin/python bench/bench_mirror.py [--bound-mb 256] [--repo-mb 384]

The issue's figure is a 1 GB mirror; a 1 GB bound needs a repository over 1 GB plus the 1 GB the
partial download grows to (over 2 GB of disk on a shared machine), so by default the bound is
scaled to 256 MB (a quarter) and the repository to 384 MB of incompressible blobs (48 × 8 MB,
`git fast-import` from os.urandom). What stopping costs does not depend on the bound's size: the
fetch is polled every POLL_SECONDS (0.2 s), so it overshoots by at most the bytes that arrive in one
poll, and the kill, the partial pack's removal and the mirror's are independent of it.

Printed: the download rate; the time from the fetch's start to the stop, against the ideal
(bound / rate: stopped the moment the bound is reached); the peak the mirror reached on disk
(sampled every 10 ms) against the bound; the time from the stop to a clean state; what is left
on disk (must be nothing: no partial pack, no mirror); the one sentence the user gets. Everything
made is deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.models import BotError
from bot.core.window import day_window
from bot.i18n import localize
from bot.sources.mirror import POLL_SECONDS, tree_bytes
from bot.sources.opened import open_source
from settings import Settings
from tests.fakes.git_http import GitHttpServer

MB = 1024 * 1024
BLOB_MB = 8


def make_repo(path: Path, total_mb: int) -> None:
    """A bare repository of one commit holding total_mb of random blobs, written by fast-import."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    proc = subprocess.Popen(["git", "--git-dir", str(path), "fast-import", "--quiet"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    n = max(1, total_mb // BLOB_MB)
    for i in range(n):
        data = os.urandom(BLOB_MB * MB)
        proc.stdin.write(f"blob\nmark :{i + 1}\ndata {len(data)}\n".encode() + data + b"\n")
    stamp = int(datetime(2026, 1, 28, 4, tzinfo=UTC).timestamp())
    head = f"commit refs/heads/main\ncommitter Bench <b@example.com> {stamp} +0000\ndata 10\nbig blobs\n"
    proc.stdin.write(head.encode())
    for i in range(n):
        proc.stdin.write(f"M 100644 :{i + 1} blob_{i:03d}.bin\n".encode())
    proc.stdin.write(b"\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("fast-import failed")
    subprocess.run(["git", "--git-dir", str(path), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    # As a host serves big binaries: no delta search among them (it is what costs, not the sending)
    subprocess.run(["git", "--git-dir", str(path), "config", "core.bigFileThreshold", "1m"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bound-mb", type=int, default=256)
    parser.add_argument("--repo-mb", type=int, default=384)
    args = parser.parse_args()
    if args.repo_mb <= args.bound_mb:
        raise SystemExit("--repo-mb must exceed --bound-mb (else the bound is never hit)")
    work = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    try:
        srv_root = work / "srv"
        t0 = time.monotonic()
        make_repo(srv_root / "org" / "big.git", args.repo_mb)
        served = tree_bytes(srv_root)
        print(f"repository: {served / MB:.0f} MB of random blobs on the server (made in {time.monotonic() - t0:.1f} s)")
        with GitHttpServer(srv_root) as srv:
            settings = Settings(
                _env_file=None,  # type: ignore[call-arg]
                data_dir=work / "data",
                mirror_max_mb=args.bound_mb,
                mirror_fetch_timeout=600,
            )
            source = open_source(srv.url_of("org/big"), settings)
            objects = Path(source.mirror.git_dir) / "objects"
            peak, crossed, stop = [0], [0.0], threading.Event()
            bound = args.bound_mb * MB

            def sample() -> None:
                while not stop.is_set():
                    size = tree_bytes(objects)
                    peak[0] = max(peak[0], size)
                    if size > bound and not crossed[0]:
                        crossed[0] = time.monotonic()
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            started = time.monotonic()
            sentence = ""
            try:
                asyncio.run(source.list_commits(day_window(datetime(2026, 1, 28).date(), "UTC")))
            except BotError as exc:
                sentence = localize(exc, "en")
            stopped = time.monotonic()
            stop.set()
            sampler.join()
        elapsed = stopped - started
        left = [str(p) for p in (work / "data").rglob("*") if p.is_file() and not p.name.endswith(".lock")]
        to_bound = (crossed[0] - started) if crossed[0] else elapsed
        rate = bound / to_bound if to_bound else 0.0
        late = stopped - crossed[0] if crossed[0] else float("nan")
        print(f"bound: MIRROR_MAX_MB={args.bound_mb} (the issue's 1 GB, scaled by {args.bound_mb / 1024:g})")
        print(
            f"download: the bound reached {to_bound:.2f} s after the fetch began ({rate / MB:.0f} MB/s over loopback)"
        )
        print(
            f"stopped, partial pack and mirror removed, sentence raised: {late:.2f} s after the bound was "
            f"crossed (ideal 0; the poll interval is {POLL_SECONDS:g} s); whole fetch {elapsed:.2f} s against "
            f"the ideal {to_bound:.2f} s (ratio {elapsed / to_bound:.3f})"
        )
        print(
            f"peak on disk: {peak[0] / MB:.1f} MB = {peak[0] / bound:.3f} × the bound "
            f"(overshoot {max(0, peak[0] - bound) / MB:.1f} MB; at most one poll's worth, "
            f"{POLL_SECONDS:g} s × rate = {POLL_SECONDS * rate / MB:.0f} MB)"
        )
        print(f"left on disk after the stop: {len(left)} files ({'clean' if not left else left[:3]})")
        print(f"the user reads: {sentence or '(no error: the bound was not hit)'}")
        print(f"extrapolated to a 1 GB bound at this rate: stop after ~{1024 * MB / rate:.1f} s" if rate else "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
