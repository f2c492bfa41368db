"""A local redis-server (Debian's package) for `make run` and the test session."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis


@dataclass
class RedisNode:
    home: Path
    port: int = 6379
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        return [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.home),
                "--save", "", "--appendonly", "no", "--protected-mode", "yes"]

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with code {self.process.returncode}")
                time.sleep(0.1)
        raise TimeoutError(f"redis-server on port {self.port} not ready")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
