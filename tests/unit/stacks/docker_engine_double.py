"""Test double of a Docker engine (no docker engine runs on this machine or in CI).

A real HTTP server on a unix socket that speaks the part of the Docker Engine API the `docker` SDK uses for
specqual's docker stacks (version, containers: create, start, inspect, logs, wait, stop, delete) and runs each
"container" as a local process group, on the host network like `network_mode="host"`: `python3` at the head
of a container's command is the image's interpreter (`images` maps image names to interpreters). Everything
above the socket is real: the SDK, DockerStack, its watchdog and the container reaper.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socketserver
import subprocess
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

API_VERSION = "1.43"


@dataclass
class Container:
    id: str
    image: str
    argv: list[str]
    env: dict[str, str]
    labels: dict[str, str]
    out: Path
    err: Path
    popen: subprocess.Popen[bytes] | None = None
    removed: bool = False
    requests: list[str] = field(default_factory=list)

    def exit_code(self) -> int | None:
        if self.popen is None:
            return None
        code = self.popen.poll()
        if code is None:
            return None
        return 128 - code if code < 0 else code  # docker reports a signal death as 128 + signal

    def signal_group(self, sig: signal.Signals) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def stop(self, grace_s: float) -> None:
        if self.popen is None or self.exit_code() is not None:
            return
        self.signal_group(signal.SIGTERM)
        try:
            self.popen.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.signal_group(signal.SIGKILL)
            self.popen.wait(10)

    def inspect(self) -> dict[str, Any]:
        code = self.exit_code()
        running = self.popen is not None and code is None
        status = "running" if running else ("exited" if self.popen is not None else "created")
        return {
            "Id": self.id,
            "Name": "/" + self.id[:12],
            "Image": self.image,
            "State": {
                "Status": status,
                "Running": running,
                "ExitCode": code or 0,
                "Pid": self.popen.pid if running and self.popen else 0,
            },
            "Config": {"Image": self.image, "Tty": False, "Labels": self.labels, "Cmd": self.argv},
            "HostConfig": {"LogConfig": {"Type": "json-file", "Config": {}}, "NetworkMode": "host"},
        }

    def logs(self, stdout: bool, stderr: bool) -> bytes:
        """The non-tty multiplexed stream: 8-byte frame headers (stream 1 stdout, 2 stderr) before each chunk."""
        frames = b""
        for wanted, stream, path in ((stdout, 1, self.out), (stderr, 2, self.err)):
            data = path.read_bytes() if wanted and path.exists() else b""
            if data:
                frames += bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data
        return frames


class FakeDockerEngine:
    """`with FakeDockerEngine(dir, {"img": python}) as engine:` then DOCKER_HOST=engine.url."""

    def __init__(self, root: Path, images: dict[str, str]) -> None:
        self.root = root
        self.images = images
        self.containers: dict[str, Container] = {}
        self.socket_path = root / "docker.sock"
        self.lock = threading.Lock()
        self._server: socketserver.ThreadingUnixStreamServer | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def live(self) -> list[Container]:
        """Containers not removed."""
        return [c for c in self.containers.values() if not c.removed]

    def __enter__(self) -> FakeDockerEngine:
        self.root.mkdir(parents=True, exist_ok=True)
        self.resume()
        return self

    def __exit__(self, *exc: object) -> None:
        self.pause()
        for c in self.containers.values():
            c.stop(1.0)

    def pause(self) -> None:
        """The engine stops answering (as while dockerd restarts); containers keep running."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            self.socket_path.unlink(missing_ok=True)

    def resume(self) -> None:
        engine = self

        class Handler(_Handler):
            pass

        Handler.engine = engine
        self._server = socketserver.ThreadingUnixStreamServer(str(self.socket_path), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    # ------------------------------------------------------------ operations

    def create(self, body: dict[str, Any]) -> Container:
        image = body["Image"]
        if image not in self.images:
            raise LookupError(f"No such image: {image}")
        argv = list(body.get("Entrypoint") or []) + list(body.get("Cmd") or [])
        if argv and argv[0] == "python3":
            argv[0] = self.images[image]
        env = dict(x.split("=", 1) for x in body.get("Env") or [])
        cid = uuid.uuid4().hex + uuid.uuid4().hex
        c = Container(
            cid, image, argv, env, body.get("Labels") or {}, self.root / f"{cid}.out", self.root / f"{cid}.err"
        )
        with self.lock:
            self.containers[cid] = c
        return c

    def start(self, c: Container) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **c.env}
        with c.out.open("wb") as out, c.err.open("wb") as err:
            c.popen = subprocess.Popen(
                c.argv, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
            )


class _Handler(BaseHTTPRequestHandler):
    engine: FakeDockerEngine

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: Any = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(code)
        ctype = "application/vnd.docker.raw-stream" if raw is not None else "application/json"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> tuple[list[str], dict[str, str]]:
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        if parts and parts[0].startswith("v1."):
            parts = parts[1:]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        return parts, query

    def _container(self, cid: str) -> Container | None:
        for c in self.engine.live():
            if c.id == cid or c.id.startswith(cid):
                c.requests.append(f"{self.command} {self.path}")
                return c
        self._send(404, {"message": f"No such container: {cid}"})
        return None

    def do_GET(self) -> None:
        parts, query = self._route()
        if parts == ["version"]:
            return self._send(200, {"ApiVersion": API_VERSION, "Version": "fake", "MinAPIVersion": "1.24"})
        if len(parts) == 3 and parts[0] == "containers":
            c = self._container(parts[1])
            if c is None:
                return None
            if parts[2] == "json":
                return self._send(200, c.inspect())
            if parts[2] == "logs":
                if _true(query.get("follow")) and c.popen is not None:
                    c.popen.wait()
                return self._send(200, raw=c.logs(_true(query.get("stdout")), _true(query.get("stderr"))))
        return self._send(404, {"message": f"not in the fake engine: GET {self.path}"})

    def do_POST(self) -> None:
        parts, query = self._route()
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        if parts == ["containers", "create"]:
            try:
                c = self.engine.create(body)
            except LookupError as e:
                return self._send(404, {"message": str(e)})
            return self._send(201, {"Id": c.id, "Warnings": []})
        if len(parts) == 3 and parts[0] == "containers":
            c = self._container(parts[1])
            if c is None:
                return None
            if parts[2] == "start":
                self.engine.start(c)
                return self._send(204)
            if parts[2] == "stop":
                c.stop(float(query.get("t", "10")))
                return self._send(204)
            if parts[2] == "wait":
                assert c.popen is not None
                c.popen.wait()
                return self._send(200, {"StatusCode": c.exit_code(), "Error": None})
        return self._send(404, {"message": f"not in the fake engine: POST {self.path}"})

    def do_DELETE(self) -> None:
        parts, query = self._route()
        if len(parts) == 2 and parts[0] == "containers":
            c = self._container(parts[1])
            if c is None:
                return None
            if c.exit_code() is None and c.popen is not None:
                if not _true(query.get("force")):
                    return self._send(409, {"message": "container is running: stop it or use force"})
                c.signal_group(signal.SIGKILL)
                c.popen.wait(10)
            c.removed = True
            return self._send(204)
        return self._send(404, {"message": f"not in the fake engine: DELETE {self.path}"})


def _true(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true")
