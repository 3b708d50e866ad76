"""A git server over HTTP on 127.0.0.1: git's own `git http-backend` (smart HTTP, protocol v2) as a
CGI program behind a loopback server, serving the bare repositories under `root` (`ORG/NAME.git`).

What a Gitea, Gitee or company server does for `git fetch` is this very program (or one speaking
the same protocol); the test can also make it refuse (HTTP Basic auth wanted, a pair or a check: 401 as git servers
answer), hang (a fetch that never gets its answer), or send slowly (`rate` bytes a second).

    with GitHttpServer(tmp_path / "srv") as srv:
        srv.add_repo("org/widgets", from_repo=repo.path)   # a bare copy
        url = srv.url_of("org/widgets")                     # http://127.0.0.1:PORT/org/widgets.git
        srv.fetches, srv.sessions                            # downloads, and git commands, served so far
"""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


class GitHttpServer:
    def __init__(self, root: Path, *, auth: tuple[str, str] | Callable[[str, str], bool] | None = None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.auth = auth
        self.hang = False  # hold every request unanswered until the server closes
        self.rate: int | None = None  # bytes a second of each response body, None: as fast as it goes
        self.delay = 0.0  # seconds before each answer (a slow server)
        self.requests: list[tuple[str, str]] = []  # (method, path?query)
        self.fetches = 0  # protocol v2 `command=fetch` requests served (one per `git fetch` that downloads)
        self.sessions = 0  # `GET …/info/refs`: one per git command that talks to the server
        self._closing = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection does: no lengths to know

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                server._serve(self, b"")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(self.rfile.readline().strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        body += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    body = self.rfile.read(length)
                server._serve(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> GitHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    # --- repositories ------------------------------------------------------------------------------
    def add_repo(self, name: str, from_repo: Path) -> Path:
        """A bare copy of `from_repo` as ORG/NAME.git (every branch and tag)."""
        target = self.root / f"{name}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(from_repo), str(target)], check=True, capture_output=True)
        return target

    def push(self, name: str, from_repo: Path, *refs: str) -> None:
        """Push `refs` (default: every branch and tag) of `from_repo` into ORG/NAME.git."""
        args = list(refs) or ["--all"]
        subprocess.run(
            ["git", "-C", str(from_repo), "push", "-q", "--force", str(self.root / f"{name}.git"), *args],
            check=True,
            capture_output=True,
        )

    def url_of(self, name: str, *, credentials: str = "") -> str:
        host = self.url.removeprefix("http://")
        return f"http://{credentials + '@' if credentials else ''}{host}/{name}.git"

    # --- serving -----------------------------------------------------------------------------------
    def _authorized(self, header: str) -> bool:
        """HTTP Basic as `auth` wants it: that (user, password), or the pair its check accepts
        (e.g. a GitHub App's installation token the fake GitHub issued and still honours)."""
        if callable(self.auth):
            scheme, _, encoded = header.partition(" ")
            try:
                user, _, password = base64.b64decode(encoded).decode().partition(":")
            except ValueError:
                return False
            return scheme == "Basic" and self.auth(user, password)
        assert self.auth is not None
        return header == "Basic " + base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()

    def _serve(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        with self._lock:
            self.requests.append((handler.command, handler.path))
        if self.hang:
            self._closing.wait(120)
            return
        if handler.command == "GET" and "/info/refs" in handler.path:
            with self._lock:
                self.sessions += 1
        if self.delay:
            time.sleep(self.delay)
        if self.auth is not None:
            if not self._authorized(handler.headers.get("Authorization") or ""):
                handler.send_response(401)
                handler.send_header("WWW-Authenticate", 'Basic realm="git"')
                handler.end_headers()
                return
        plain = gzip.decompress(body) if handler.headers.get("Content-Encoding") == "gzip" and body else body
        if b"command=fetch" in plain:
            with self._lock:
                self.fetches += 1
        parts = urlsplit(handler.path)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "REQUEST_METHOD": handler.command,
            "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(plain)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": handler.headers.get("Git-Protocol", ""),
            "HTTP_GIT_PROTOCOL": handler.headers.get("Git-Protocol", ""),
        }
        proc = subprocess.Popen(
            ["git", "http-backend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        writer = threading.Thread(target=_feed, args=(proc.stdin, plain), daemon=True)
        writer.start()
        status, headers = 200, []
        while True:  # the CGI headers, then a blank line
            line = proc.stdout.readline().decode("latin-1").rstrip("\r\n")
            if not line:
                break
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            else:
                headers.append((key, value.strip()))
        try:
            handler.send_response(status)
            for key, value in headers:
                handler.send_header(key, value)
            handler.end_headers()
            started, sent = time.monotonic(), 0
            while chunk := proc.stdout.read(64 * 1024):
                handler.wfile.write(chunk)
                sent += len(chunk)
                if self.rate:
                    ahead = sent / self.rate - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed (a bound): nothing more to send
        finally:
            proc.kill()
            proc.wait()
            writer.join(5)


def _feed(stdin, data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except (BrokenPipeError, OSError):
        pass
