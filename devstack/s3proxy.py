"""An S3-compatible server for the tests of replays to s3a:// URIs: S3Proxy (org.gaul:s3proxy, fetched by
`make test-deps` into .cache/s3proxy/libs) backed by a folder through jclouds' "filesystem" provider, listening
on 127.0.0.1 with SigV4 authentication. A bucket is a folder under `home/data`.

    python -m devstack.s3proxy --port 9000 --home .data/s3
"""

from __future__ import annotations

import argparse
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devstack.launcher import (
    SMALL_JVM, Watched, free_port, java_command, maven_jars, start_logged, stop_process, wait_until_ready,
)
from console.paths import CACHE_DIR, DATA_DIR

S3PROXY_LIBS = CACHE_DIR / "s3proxy" / "libs"


def s3proxy_jar() -> Path:
    return maven_jars(S3PROXY_LIBS, "s3proxy-*-jar-with-dependencies.jar",
                      f"S3Proxy is missing in {S3PROXY_LIBS}: run `make test-deps`.")[-1]


@dataclass
class S3Server:
    home: Path
    port: int = field(default_factory=free_port)
    access_key: str = field(default_factory=lambda: "console-" + secrets.token_hex(4))
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / "s3proxy.log"

    def create_bucket(self, name: str) -> None:
        """The filesystem provider's buckets are folders: made directly, no signed request needed."""
        (self.home / "data" / name).mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        properties = self.home / "s3proxy.properties"
        properties.write_text("\n".join([
            f"s3proxy.endpoint={self.endpoint}",
            "s3proxy.authorization=aws-v2-or-v4",
            f"s3proxy.identity={self.access_key}",
            f"s3proxy.credential={self.secret_key}",
            "jclouds.provider=filesystem",
            f"jclouds.filesystem.basedir={self.home / 'data'}",
        ]) + "\n")
        properties.chmod(0o600)
        command = java_command(s3proxy_jar(), "--properties", properties, heap=("-Xmx128m",), options=SMALL_JVM)
        self.process = start_logged(command, self.log_path, cwd=self.home)

    def ready(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=2).close()
        except urllib.error.HTTPError:  # an unsigned request is refused: the server answers
            return True
        except OSError:
            return False
        return True

    def wait_ready(self, timeout: float = 60.0) -> None:
        wait_until_ready(self.ready, what=f"S3Proxy on port {self.port}", timeout=timeout, interval=0.2,
                         watch=[Watched("S3Proxy", self.process, self.log_path)])

    def stop(self) -> None:
        stop_process(self.process, timeout=15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--home", type=Path, default=DATA_DIR / "s3")
    parser.add_argument("--bucket", default="replays")
    args = parser.parse_args(argv)
    server = S3Server(home=args.home.resolve(), port=args.port)
    server.create_bucket(args.bucket)
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    server.start()
    server.wait_ready()
    print(f"S3Proxy on {server.endpoint}, bucket '{args.bucket}'; access key {server.access_key}, secret key in "
          f"{server.home / 's3proxy.properties'}", flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
