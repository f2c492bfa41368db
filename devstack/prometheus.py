"""A Prometheus server (Debian's `prometheus` package) that scrapes brokers' JMX exporter agents: the server the
Prometheus metrics source is tested against. It listens on loopback behind a user and password (its web
configuration holds only the password's bcrypt hash) and keeps its data under `home`."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from base64 import b64encode
from dataclasses import dataclass, field
from pathlib import Path

from devstack.jmx_exporter import ExporterAgent
from devstack.launcher import Watched, start_logged, stop_process, wait_until_ready

PROMETHEUS = "/usr/bin/prometheus"
MSG_MISSING = "Prometheus is missing (/usr/bin/prometheus): run `make test-deps` (Debian's prometheus package)."


@dataclass
class PrometheusServer:
    home: Path
    port: int
    targets: list[ExporterAgent]
    username: str = "console"
    password: str = field(default="", repr=False)
    scrape_interval_s: int = 1
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / "prometheus.log"

    def _write_config(self) -> Path:
        import bcrypt

        folder = self.home / "config"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # One job per exporter: each has a password of its own, which a job's basic_auth holds once.
        jobs = []
        for agent in self.targets:
            secret = folder / f"exporter-{agent.port}.password"
            secret.write_text(agent.password)
            secret.chmod(0o600)
            jobs.append({"job_name": f"kafka-{agent.port}", "static_configs": [{"targets": [f"127.0.0.1:{agent.port}"]}],
                         "basic_auth": {"username": agent.username, "password_file": str(secret)}})
        config = folder / "prometheus.yml"
        config.write_text(json.dumps({"global": {"scrape_interval": f"{self.scrape_interval_s}s",
                                                 "scrape_timeout": f"{self.scrape_interval_s}s"},
                                      "scrape_configs": jobs}, indent=2))
        hashed = bcrypt.hashpw(self.password.encode(), bcrypt.gensalt(rounds=6)).decode()
        (folder / "web.yml").write_text(json.dumps({"basic_auth_users": {self.username: hashed}}))
        return config

    def start(self) -> None:
        if not shutil.which(PROMETHEUS):
            raise SystemExit(MSG_MISSING)
        self.home.mkdir(parents=True, exist_ok=True)
        config = self._write_config()
        self.process = start_logged([
            PROMETHEUS, f"--config.file={config}", f"--web.config.file={config.parent / 'web.yml'}",
            f"--storage.tsdb.path={self.home / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
            "--log.level=warn", "--storage.tsdb.retention.time=1d"], self.log_path)

    def _get(self, where: str) -> bytes | None:
        request = urllib.request.Request(f"{self.url}{where}", headers={
            "Authorization": "Basic " + b64encode(f"{self.username}:{self.password}".encode()).decode()})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return response.read() if response.status == 200 else None
        except (OSError, urllib.error.URLError):
            return None

    def _scraped(self, agents: list[ExporterAgent]) -> bool:
        """Each of `agents` scraped and up: Prometheus applies new targets only seconds after it starts."""
        body = self._get("/api/v1/query?query=up")
        if body is None:
            return False
        up = {s["metric"]["instance"]: s["value"][1] for s in json.loads(body)["data"]["result"]}
        return all(up.get(f"127.0.0.1:{agent.port}") == "1" for agent in agents)

    def wait_ready(self, timeout: float = 60.0, *, up: list[ExporterAgent] | None = None) -> None:
        """Until Prometheus answers and has scraped the exporters (`up`, by default all its targets) once."""
        agents = self.targets if up is None else up
        wait_until_ready(lambda: self._scraped(agents), what=f"Prometheus on port {self.port} scraping its exporters",
                         timeout=timeout, watch=[Watched("Prometheus", self.process, self.log_path)])

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
