"""A local redis-server (Debian's package) for `make run` and the test session.

Any process on the host can open a loopback port, and whoever reaches the Celery broker can queue the console's
tasks; so the server asks for a password (`requirepass`). The password is in a configuration file only its owner
can read (a command-line argument would show in every user's `ps`), and in REDIS_URL for the console's processes.
`python -m devstack.redis run` is what `make run` starts: REDIS_PASSWORD comes from `.env`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import redis

from console.paths import DATA_DIR

MSG_NO_PASSWORD = "REDIS_PASSWORD is not set: `make run` writes it to .env (run `make .env`, or set it)."


def redis_url(port: int, password: str) -> str:
    return f"redis://:{quote(password, safe='')}@127.0.0.1:{port}/0"


@dataclass
class RedisNode:
    home: Path
    port: int = 6379
    password: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    save: str = ""  # RDB snapshots: none for tests
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return redis_url(self.port, self.password)

    @property
    def config_file(self) -> Path:
        return self.home / "redis.conf"

    def write_config(self) -> None:
        """The configuration, password included, created readable by its owner alone from its first byte."""
        self.home.mkdir(parents=True, exist_ok=True)
        lines = [f"port {self.port}", "bind 127.0.0.1", f'dir "{self.home}"', f'save "{self.save}"',
                 "appendonly no", "protected-mode yes", f'requirepass "{self.password}"']
        staging = self.config_file.with_name(f".redis.conf.{os.getpid()}")
        staging.unlink(missing_ok=True)
        descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(staging, self.config_file)

    def command(self) -> list[str]:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        return [binary, str(self.config_file)]

    def start(self) -> None:
        self.write_config()
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--home", type=Path, default=DATA_DIR / "redis")
    parser.add_argument("--port", type=int, default=6379)
    args = parser.parse_args(argv)
    password = os.environ.get("REDIS_PASSWORD")
    if not password:
        sys.exit(MSG_NO_PASSWORD)
    node = RedisNode(home=args.home.resolve(), port=args.port, password=password, save="60 1")
    node.write_config()
    command = node.command()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
