"""The child side of console.kafka.sandbox: one process holding the librdkafka clients of one cluster.

It reads length-prefixed pickled requests on stdin, runs each on a thread (so a slow call does not hold up the
others) against an in-process KafkaAdmin, and writes the answers, or the gateway exception, on stdout. If
librdkafka aborts, only this process dies; the parent notices the closed pipe and answers for it.

Run as `python -m console.kafka.sandbox_child`; the parent is the only peer, so pickle is safe here.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

HEADER = struct.Struct("!I")
MAX_THREADS = 8
FORGET = "__forget__"  # drops cached clients and fail-fast marks, as forget_clients() does in-process


def read_message(stream) -> object | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return pickle.loads(payload)


def write_message(stream, lock: threading.Lock, message: object) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    with lock:
        stream.write(HEADER.pack(len(payload)) + payload)
        stream.flush()


def _picklable_error(exc: BaseException, cluster: str) -> BaseException:
    from console.kafka.errors import KafkaRequestFailed

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # an exception whose constructor pickle cannot replay
        return KafkaRequestFailed(f"{type(exc).__name__}: {exc}", cluster=cluster)


def serve(connection, stdin, stdout) -> None:
    from console.kafka.admin import KafkaAdmin
    from console.kafka.client import forget_clients
    from console.kafka.mapping import map_exception

    lock = threading.Lock()

    def run(request_id: int, method: str, args: tuple, kwargs: dict, timeout: float, backoff: float) -> None:
        try:
            if method == FORGET:
                forget_clients()
                value = None
            else:
                admin = KafkaAdmin(connection, timeout=timeout, unreachable_backoff=backoff)
                value = getattr(admin, method)(*args, **kwargs)
            answer = (request_id, True, value)
        except BaseException as exc:  # everything goes back to the caller, mapped like an in-process call
            mapped = map_exception(exc, cluster=connection.name, timeout=timeout)
            answer = (request_id, False, _picklable_error(mapped, connection.name))
        write_message(stdout, lock, answer)

    with ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="kafka-call") as pool:
        while (request := read_message(stdin)) is not None:
            pool.submit(run, *request)
    # stdin closed: the parent is gone or retired us; unfinished calls have nobody to answer to.
    os._exit(0)


def main() -> None:
    logging.basicConfig(level=os.environ.get("LIBRDKAFKA_LOG_LEVEL", "CRITICAL"), stream=sys.stderr,
                        format="%(asctime)s kafka-client[%(process)d] %(levelname)s %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers may reach the parent's pipe
    connection = read_message(stdin)
    if connection is None:
        return
    serve(connection, stdin, stdout)


if __name__ == "__main__":
    main()
