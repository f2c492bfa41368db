"""A Spark standalone cluster (one master, one worker) from pyspark's own `bin/spark-class`: nothing to download.
Replays reach it with SPARK_MASTER=spark://127.0.0.1:PORT; the tests start one per session.

    python -m devstack.spark_cluster --home .data/spark-cluster

Master and worker listen on loopback only, with the web UIs on ports of their own (the master's JSON at
/json/ tells when the worker has registered). The worker offers what the machine can spare: 2 cores, 1 GiB.
Both ask every caller for Spark's shared secret (spark.authenticate, with the traffic encrypted): the console's
driver and the executors the worker starts get it, any other process of the host gets nothing. It comes from
SPARK_AUTHENTICATE_SECRET (the console's worker reads the same variable; `make` writes one to .env) and reaches
the daemons in a 0600 properties file, never on a command line.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import environ
import pyspark

from devstack.launcher import Watched, free_port, start_logged, stop_process, wait_until_ready
from console.paths import DATA_DIR, PROJECT_DIR
from gateway.secret_files import write_secret_file

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
SECRET_ENV = "SPARK_AUTHENTICATE_SECRET"
MSG_NO_SECRET = (f"${SECRET_ENV} is not set: the master and worker would take anyone's RPC. `make` writes one to .env; "
                 "the console's worker needs the same value.")


@dataclass
class SparkStandalone:
    home: Path
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    worker_port: int = field(default_factory=free_port)
    worker_ui_port: int = field(default_factory=free_port)
    cores: int = 2
    memory: str = "1g"
    secret: str = field(default_factory=lambda: secrets.token_hex(32), repr=False)
    processes: list[subprocess.Popen] = field(default_factory=list, repr=False)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_HOST": "127.0.0.1",
                "SPARK_WORKER_DIR": str(self.home / "work"), "SPARK_LOG_DIR": str(self.home),
                "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
                # Small daemons: they only schedule; the executors get the worker's memory.
                "SPARK_DAEMON_MEMORY": "256m"}

    def properties(self) -> Path:
        """The daemons' security settings, with the secret: 0600, read by spark-class's --properties-file."""
        return write_secret_file(self.home / "spark-security.conf", "spark.authenticate true\n"
                                 f"spark.authenticate.secret {self.secret}\nspark.network.crypto.enabled true\n")

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "work").mkdir(exist_ok=True)
        properties = str(self.properties())
        self._spawn("master", [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.port),
                               "--webui-port", str(self.ui_port), "--properties-file", properties])
        self._spawn("worker", [WORKER_CLASS, "--host", "127.0.0.1", "--port", str(self.worker_port),
                               "--webui-port", str(self.worker_ui_port), "--cores", str(self.cores),
                               "--memory", self.memory, "--work-dir", str(self.home / "work"),
                               "--properties-file", properties, self.url])

    def _spawn(self, name: str, args: list[str]) -> None:
        # spark-class is a script that starts the JVM as its child: a process group of their own stops both.
        self.processes.append(start_logged([str(SPARK_CLASS), *args], self.home / f"{name}.log", cwd=self.home,
                                           env=self.environment(), new_session=True))

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as response:
                return int(json.load(response).get("aliveworkers", 0))
        except (OSError, urllib.error.URLError, ValueError):
            return 0

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Until a worker has registered with the master."""
        watch = [Watched(f"the Spark {role}", process, self.home / f"{role}.log")
                 for role, process in zip(("master", "worker"), self.processes)]  # in the order start() spawns them
        wait_until_ready(lambda: self.alive_workers() >= 1, what=f"the Spark master {self.url} (with a worker)",
                         watch=watch, timeout=timeout)

    def stop(self) -> None:
        for process in reversed(self.processes):  # the worker first: it stops its executors
            stop_process(process, timeout=15, group=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DATA_DIR / "spark-cluster")
    parser.add_argument("--port", type=int, default=7077)
    args = parser.parse_args(argv)
    environ.Env.read_env(str(PROJECT_DIR / ".env"), overwrite=False)  # as the console's settings read it
    secret = os.environ.get(SECRET_ENV, "")
    if not secret:
        raise SystemExit(MSG_NO_SECRET)
    cluster = SparkStandalone(home=args.home.resolve(), port=args.port, secret=secret)
    stopping = False

    def stop(_signum, _frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    cluster.start()
    try:
        cluster.wait_ready()
        print(f"Spark standalone master {cluster.url} with one worker; logs in {cluster.home}", flush=True)
        while not stopping and all(p.poll() is None for p in cluster.processes):
            time.sleep(0.5)
    finally:
        cluster.stop()
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
