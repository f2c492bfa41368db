"""An S3-compatible server for the tests of replays to s3a:// URIs: S3Proxy (org.gaul:s3proxy, fetched by
`make test-deps` into .cache/s3proxy/libs) backed by a folder through jclouds' "filesystem" provider, listening
on 127.0.0.1 with SigV4 authentication. A bucket is a folder under `home/data`.

    python -m console.devstack.s3proxy --port 9000 --home .data/s3
"""

from __future__ import annotations

import argparse
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from console.devstack.kafka import free_port
from console.devstack.paths import CACHE_DIR, DATA_DIR

S3PROXY_LIBS = CACHE_DIR / "s3proxy" / "libs"


def s3proxy_jar() -> Path:
    jars = sorted(S3PROXY_LIBS.glob("s3proxy-*-jar-with-dependencies.jar"))
    if not jars:
        raise SystemExit(f"S3Proxy is missing in {S3PROXY_LIBS}: run `make test-deps`.")
    return jars[-1]


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
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(
                ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", str(s3proxy_jar()),
                 "--properties", str(properties)],
                cwd=self.home, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def ready(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=2).close()
        except urllib.error.HTTPError:  # an unsigned request is refused: the server answers
            return True
        except OSError:
            return False
        return True

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"S3Proxy exited with code {self.process.returncode}; see {self.log_path}")
            if self.ready():
                return
            time.sleep(0.2)
        raise TimeoutError(f"S3Proxy on port {self.port} did not answer within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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
