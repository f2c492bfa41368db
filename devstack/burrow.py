"""LinkedIn's Burrow (built by devstack/burrow.sh) as a real server over one Kafka cluster: its kafka cluster module
polls the log end offsets, its kafka consumer module tails __consumer_offsets, its in-memory storage keeps the last
`intervals` commits of every partition, and its caching evaluator answers /v3/kafka/<cluster>/consumer/<group>/lag.
The oracle of the console's lag status rules (tests/offsets/lag/test_burrow_parity.py)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devstack.launcher import Watched, start_logged, stop_process, wait_until_ready

ROOT = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = ROOT / "devstack" / "burrow.sh"
CLUSTER = "local"
# sarama's newest protocol table: Kafka 4 dropped the request versions of brokers before 2.1 (KIP-896), and sarama
# picks each request's version from this, so an older setting asks for versions a 4.x broker refuses.
KAFKA_VERSION = "4.0.0"


def burrow_binary() -> tuple[Path | None, str]:
    """(the binary, "") once devstack/burrow.sh has built it (it builds it when it can), else (None, why not)."""
    done = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=900)
    if done.returncode == 0:
        return Path(done.stdout.strip().splitlines()[-1]), ""
    return None, (done.stderr.strip() or done.stdout.strip())[-2000:]


def _toml(value) -> str:
    return json.dumps(value)  # strings, numbers, booleans and lists of strings are written alike in TOML and JSON


@dataclass
class BurrowServer:
    binary: Path
    home: Path
    port: int
    bootstrap: str
    group_allowlist: str  # a regular expression: the groups of one test, not every group the broker ever had
    intervals: int = 10  # commits kept per partition: the evaluation window
    offset_refresh_s: int = 1  # how often the log end offsets are polled (its default is 10 s)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / "burrow.log"

    def _write_config(self) -> None:
        sections = {
            "general": {"pidfile": str(self.home / "burrow.pid")},
            "logging": {"level": "info"},
            "client-profile.parity": {"client-id": "burrow-parity", "kafka-version": KAFKA_VERSION},
            f"cluster.{CLUSTER}": {"class-name": "kafka", "servers": [self.bootstrap], "client-profile": "parity",
                                   "topic-refresh": 1, "offset-refresh": self.offset_refresh_s},
            f"consumer.{CLUSTER}": {"class-name": "kafka", "cluster": CLUSTER, "servers": [self.bootstrap],
                                    "client-profile": "parity", "group-allowlist": self.group_allowlist},
            # min-distance 0: every commit is its own entry in the window (a larger one merges commits closer than it)
            "storage.default": {"class-name": "inmemory", "intervals": self.intervals, "min-distance": 0,
                                "expire-group": 604800, "workers": 4},
            # minimum-complete 0 (its default): a partition with fewer than `intervals` commits is judged too
            "evaluator.default": {"class-name": "caching", "expire-cache": 1, "minimum-complete": 0.0},
            "httpserver.default": {"address": f"127.0.0.1:{self.port}"},
        }
        lines = []
        for name, values in sections.items():
            lines.append(f"[{name}]")
            lines += [f"{key}={_toml(value)}" for key, value in values.items()]
            lines.append("")
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "burrow.toml").write_text("\n".join(lines))

    def start(self) -> None:
        self._write_config()
        self.process = start_logged([str(self.binary), f"--config-dir={self.home}"], self.log_path, cwd=self.home)

    def get(self, where: str) -> dict | None:
        """The JSON Burrow answers at `where` (a path under /v3/kafka/<cluster>/), None for an error or no answer."""
        try:
            with urllib.request.urlopen(f"{self.url}/v3/kafka/{CLUSTER}/{where}", timeout=5) as response:
                body = json.loads(response.read())
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return None if body.get("error") else body

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until its HTTP server answers for the cluster (the Kafka modules started before it)."""
        wait_until_ready(lambda: self.get("topic") is not None, what=f"Burrow on port {self.port}", timeout=timeout,
                         watch=[Watched("Burrow", self.process, self.log_path)])

    def log_ends(self, topic: str) -> list[int] | None:
        """The newest log end offset per partition Burrow has polled for `topic`."""
        body = self.get(f"topic/{urllib.parse.quote(topic, safe='')}")
        return body["offsets"] if body else None

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """The newest commit per partition that Burrow's storage holds for `group`."""
        body = self.get(f"consumer/{urllib.parse.quote(group, safe='')}")
        seen = {}
        for topic, partitions in (body or {}).get("topics", {}).items():
            for partition, entry in enumerate(partitions):
                offsets = [o for o in entry.get("offsets") or [] if o]
                if offsets:
                    seen[(topic, partition)] = offsets[-1]["offset"]
        return seen

    def status(self, group: str) -> dict | None:
        """The evaluator's verdict on `group` with every partition's ("status": OK, WARN, ERR, and per partition
        also STOP, STALL, REWIND), as /lag answers it."""
        body = self.get(f"consumer/{urllib.parse.quote(group, safe='')}/lag")
        return body["status"] if body else None

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
