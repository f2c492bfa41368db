"""Each cluster's Kafka clients in a process of their own, shared by the host's web and Celery processes:
client_processes.py starts and reaches them, child.py is the process, sockets.py and wire.py its link. Callers use
the names below; the gateway's IsolatedKafkaAdmin sends every operation through `call`."""

from gateway.kafka.sandbox.client_processes import (  # noqa: F401 - the package's face
    MSG_CHILD_DIED, MSG_CHILD_SILENT, SILENT_AFTER_BOUNDS, HostClientProcess, call, child_pids, forget_all,
    host_client_processes, stop_all, stop_host_processes,
)
