"""The container image's figures (issue 34): image size and what makes it up, build time cold and
with the layer cache (no change, and a change of the bot's code), time to healthy and stop time of
`serve`. Prints each figure; asserts nothing. Needs root and podman (tests/deploy/test_containers.py
installs it and builds the base; run that once first, or let this script do the same).

  python bench/bench_container.py             # cached builds, health and stop
  python bench/bench_container.py --cold      # also a build without any cached layer (pip downloads again)

Everything runs in the test's podman store (/var/cache/digest-bot-test), on its Debian-built base.
Ideal: a code change rebuilds only the bot's own layers (seconds, not the dependencies' minutes);
a stop is well inside the runtime's 10 s grace.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true", help="also build with no cached layer")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_container: needs root (podman, rootful), as tests/deploy/test_containers.py", file=sys.stderr)
        return 2
    from tests.deploy import test_containers as t
    from tests.fakes.slack_server import FakeSlack
    from tests.shared.redis_proc import free_port

    t._install_runtime()
    engine = t.Engine()
    began = time.monotonic()
    t._build_base(engine)
    print(f"base image present or built: {time.monotonic() - began:.1f} s")
    if args.cold:
        began = time.monotonic()
        build = ["build", "--no-cache", "--format", "docker", "--build-arg", f"BASE={t.BASE}", "-t", t.IMAGE]
        if t.CA_BUNDLE.is_file():
            build += ["--secret", f"id=ca,src={t.CA_BUNDLE}"]
        engine.podman(*build, str(ROOT), timeout=1800)
        print(f"build, cold (no cached layer; pip downloads): {time.monotonic() - began:.1f} s")
    print(f"build, every layer cached: {t._build_image(engine):.1f} s")
    with tempfile.TemporaryDirectory() as tmp:  # a change of the bot's code, in a copy of the context
        context = Path(tmp) / "context"
        shutil.copytree(
            ROOT, context, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "site", ".data", "tests")
        )
        with open(context / "bot" / "__init__.py", "a") as f:
            f.write(f"# {time.time()}\n")
        build = ["build", "--format", "docker", "--build-arg", f"BASE={t.BASE}", "-t", "localhost/digest-bot:bench"]
        if t.CA_BUNDLE.is_file():
            build += ["--secret", f"id=ca,src={t.CA_BUNDLE}"]
        began = time.monotonic()
        engine.podman(*build, str(context))
        print(f"build after a change of the bot's code: {time.monotonic() - began:.1f} s")
        engine.podman("rmi", "localhost/digest-bot:bench", check=False)

    size = int(engine.podman("image", "inspect", "--format", "{{.Size}}", t.IMAGE).stdout)
    print(f"image size: {size / 1e6:.0f} MB; its layers:")
    history = engine.podman("history", "--format", "{{.Size}}\t{{.CreatedBy}}", t.IMAGE).stdout
    for line in history.splitlines():
        layer, _, made_by = line.partition("\t")
        if not layer.startswith("0 B"):
            print(f"  {layer:>10}  {made_by[:90]}")
    du = engine.podman(
        "run", "--rm", "--entrypoint", "sh", t.IMAGE, "-c",
        "du -sk /opt/venv/lib/python3*/site-packages/* | sort -n | tail -10",
    ).stdout  # fmt: skip
    print("  largest parts of the virtualenv (KB):")
    for line in du.splitlines()[::-1]:
        kb, _, path = line.partition("\t")
        print(f"  {int(kb) / 1024:>8.0f} MB  {Path(path).name}")

    port = free_port()
    name = f"bench-serve-{os.getpid()}"
    with FakeSlack() as slack:
        try:
            began = time.monotonic()
            engine.podman(
                "run", "-d", "--name", name, "--network", "host",
                "-e", f"SLACK_BOT_TOKEN={slack.token}", "-e", f"SLACK_API_URL={slack.url}",
                "-e", "SLACK_SIGNING_SECRET=bench", "-e", f"PORT={port}", "-e", "HOST=127.0.0.1",
                t.IMAGE, "run",
            )  # fmt: skip
            engine.wait_healthy([name])
            print(f"run (embedded Redis): healthy {time.monotonic() - began:.1f} s after `podman run`")
            began = time.monotonic()
            engine.podman("stop", "-t", "10", name)
            code = engine.inspect(name, "{{.State.ExitCode}}")
            print(
                f"run: stopped in {time.monotonic() - began:.2f} s (exit {code}; 137 would be the SIGKILL after 10 s)"
            )
        finally:
            engine.podman("rm", "-f", "-v", name, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
