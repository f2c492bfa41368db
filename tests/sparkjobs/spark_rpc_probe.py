"""A Spark RPC client in a process and JVM of its own, as any other process of the host could run one: for each JSON
line on stdin ({"port", "endpoint", "secret"}), it looks `endpoint` up at 127.0.0.1:port, with `secret` as
spark.authenticate.secret (and encryption) or with no authentication when it is empty, and answers one JSON line:
{"reached": bool, "why": the deepest cause's text}. The secret comes on stdin, never on a command line.

    python tests/sparkjobs/spark_rpc_probe.py
"""

from __future__ import annotations

import json
import sys

from py4j.protocol import Py4JJavaError
from pyspark import SparkConf
from pyspark.java_gateway import launch_gateway


def main() -> None:
    gateway = launch_gateway(SparkConf())
    jvm = gateway.jvm
    config = getattr(getattr(jvm.org.apache.spark.internal.config, "package$"), "MODULE$")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        asked = json.loads(line)
        conf = jvm.org.apache.spark.SparkConf(False)
        # Not a local master: with one, Spark would make a secret of its own instead of taking this one.
        conf.set("spark.master", "spark://127.0.0.1:1").set("spark.rpc.lookupTimeout", "5s")
        if asked["secret"]:
            conf.set("spark.authenticate", "true").set("spark.authenticate.secret", asked["secret"])
            conf.set("spark.network.crypto.enabled", "true")
        manager = jvm.org.apache.spark.SecurityManager(conf, jvm.scala.Option.empty(), config.AUTH_SECRET_FILE())
        env = jvm.org.apache.spark.rpc.RpcEnv.create("probe", "127.0.0.1", 0, conf, manager, True)
        try:
            env.setupEndpointRefByURI(f"spark://{asked['endpoint']}@127.0.0.1:{asked['port']}")
            answer = {"reached": True, "why": ""}
        except Py4JJavaError as exc:
            cause = exc.java_exception
            while cause.getCause() is not None:
                cause = cause.getCause()
            answer = {"reached": False, "why": str(cause.toString())}
        finally:
            env.shutdown()
        print(json.dumps(answer), flush=True)
    gateway.shutdown()


if __name__ == "__main__":
    main()
