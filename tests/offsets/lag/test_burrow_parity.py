"""The console's lag status against LinkedIn's Burrow as a real oracle: Burrow v1.9.5 (devstack/burrow.sh) runs as a
server over the session's Kafka 4.3.1 broker, reading the commits from __consumer_offsets and the log ends from the
broker, while real groups commit scripted histories and the console's recorder and lag sweep follow the same broker.
Where the rules mean the same, the verdicts must be the same; where the console differs on purpose
(docs/on-call/lag-and-history.md, "The console's status and Burrow's"), each side must give the documented one.

Each step of the script produces, waits until Burrow has polled the new log ends, commits, waits until Burrow
stored the commit (so its lag at that commit is the same figure as the console's sample), then runs the recorder
and one lag sweep. Burrow is skipped, with why, where it cannot be built (the Go module proxy refuses it)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from devstack.burrow import BurrowServer, burrow_binary
from devstack.launcher import free_ports
from offsets.history.recorder import record_from_topic
from offsets.lag.sampler import lag_sample
from offsets.models import GroupLagStatus

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db]

STEPS = 13
INTERVALS = 10  # Burrow's window (commits per partition) and the console's (LAG_STATUS_WINDOW samples)
OFFSET_REFRESH_S = 1
# Burrow's partition statuses as the console names them where the rule is the same (STALL is the console's ERR: a
# group still committing an offset that does not move; Burrow's group folds STOP, STALL and REWIND into ERR).
CONSOLE_NAME = {"OK": "OK", "WARN": "WARN", "STALL": "ERR", "STOP": "STOP"}


@dataclass(frozen=True)
class Script:
    """A group's history on a topic of len(backlog) partitions: `backlog` records before step 0, `rate` more per
    step, and at each step the offsets it commits (None: it does not commit at that step)."""

    name: str
    backlog: tuple[int, ...]
    rate: tuple[int, ...]
    commits: object  # (step, log ends after the step's records) -> tuple of offsets | None
    burrow: tuple[str, dict[int, str]]  # what Burrow must say: group status, partition → status
    console: tuple[str, dict[int, str]] | None = None  # the documented difference (None: the same as Burrow)

    def end(self, step: int, partition: int) -> int:
        return self.backlog[partition] + self.rate[partition] * (step + 1)


def _rewound(step: int) -> int:
    return (50, 60, 70, 80)[step] if step < 4 else 10 + 2 * (step - 4)


def _recovered(step: int) -> int:
    return (50, 60, 70, 80)[step] if step < 4 else 40 + 20 * (step - 4)


SCRIPTS = [
    Script("caught-up", (0,), (5,), lambda s, ends: ends, ("OK", {0: "OK"})),
    Script("catching-up", (200,), (2,), lambda s, ends: (10 * (s + 1),), ("OK", {0: "OK"})),
    # Keeps pace with a fixed backlog: Burrow's "lag never went down" counts an unchanged lag, the console's
    # falling-behind needs the lag to end higher.
    Script("steady-lag", (20,), (5,), lambda s, ends: (5 * (s + 1),), ("WARN", {0: "WARN"}),
           console=("OK", {0: "OK"})),
    Script("falling-behind", (10,), (10,), lambda s, ends: (3 * (s + 1),), ("WARN", {0: "WARN"})),
    # Partition 0 keeps up; partition 1 is committed at the same offset every step with lag behind it.
    Script("stalled", (0, 30), (5, 5), lambda s, ends: (ends[0], 7), ("ERR", {0: "OK", 1: "STALL"})),
    # Caught up at its last commits, then stopped while the topic grows: Burrow looks at STOP before zero lag.
    Script("stopped", (0,), (5,), lambda s, ends: ends if s < 2 else None, ("ERR", {0: "STOP"})),
    # Catching up, then its consumers died: silent for longer than it had committed, while the lag went down in
    # part of the window (the console called this OK, "consuming", until a whole window had one committed offset).
    Script("died-catching-up", (100,), (2,), lambda s, ends: (10 * (s + 1),) if s < 5 else None,
           ("ERR", {0: "STOP"})),
    # Reset from 80 back to 10 and consuming since: Burrow holds the rewind against it while the commit before it
    # is in its window; the console judges the commits since the reset.
    Script("rewound", (100,), (1,), lambda s, ends: (_rewound(s),), ("ERR", {0: "REWIND"}),
           console=("OK", {0: "OK"})),
    # Back past the offset it had before the reset: Burrow goes on to its other rules, as the console does.
    Script("rewind-recovered", (200,), (1,), lambda s, ends: (_recovered(s),), ("OK", {0: "OK"})),
]


def wait_for(what: str, check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"Burrow never showed {what}"
        time.sleep(0.1)


@pytest.fixture
def burrow(kafka_node, tmp_path):
    binary, why = burrow_binary()
    if binary is None:
        pytest.skip(f"Burrow could not be built: {why}")
    prefix = f"burrow-parity-{uuid.uuid4().hex[:8]}-"
    server = BurrowServer(binary=binary, home=tmp_path / "burrow", port=free_ports(1)[0], bootstrap=kafka_node.bootstrap,
                          group_allowlist=f"^{prefix}", intervals=INTERVALS, offset_refresh_s=OFFSET_REFRESH_S)
    server.start()
    try:
        server.wait_ready()
        yield server, prefix
    finally:
        server.stop()


def test_the_console_gives_burrows_verdict_or_the_documented_difference(burrow, local_cluster, topic_factory,
                                                                         settings):
    from confluent_kafka import Consumer, Producer, TopicPartition

    server, prefix = burrow
    settings.LAG_STATUS_WINDOW = INTERVALS
    topics = {s.name: topic_factory(f"parity-{s.name}", partitions=len(s.backlog)) for s in SCRIPTS}
    groups = {s.name: f"{prefix}{s.name}" for s in SCRIPTS}
    producer = Producer({"bootstrap.servers": local_cluster.bootstrap_servers, "linger.ms": 0})
    committers = {s.name: Consumer({"bootstrap.servers": local_cluster.bootstrap_servers, "group.id": groups[s.name],
                                    "enable.auto.commit": False}) for s in SCRIPTS}
    newest_commit_ms: dict[tuple[str, int], int] = {}
    stopped_growing_at = 0.0
    try:
        for step in range(-1, STEPS):
            for script in SCRIPTS:
                for partition, count in enumerate(script.backlog if step < 0 else script.rate):
                    for _ in range(count):
                        producer.produce(topics[script.name], value=b"x", partition=partition)
            assert producer.flush(30) == 0
            if step == 2:
                stopped_growing_at = time.monotonic()  # the stopped group's log grows past its last commit
            for script in SCRIPTS:
                ends = tuple(script.end(step, p) if step >= 0 else script.backlog[p]
                             for p in range(len(script.backlog)))
                wait_for(f"{topics[script.name]} ending at {ends}",
                         lambda t=topics[script.name], e=ends: tuple(server.log_ends(t) or ()) == e)
            if step < 0:
                continue
            for script in SCRIPTS:
                ends = tuple(script.end(step, p) for p in range(len(script.backlog)))
                offsets = script.commits(step, ends)
                if offsets is None:
                    continue
                committers[script.name].commit(offsets=[TopicPartition(topics[script.name], p, o)
                                                        for p, o in enumerate(offsets)], asynchronous=False)
            for script in SCRIPTS:
                _wait_until_burrow_stored(server, script, step, groups[script.name], topics[script.name],
                                          newest_commit_ms)
            record_from_topic("local", should_stop=lambda: False, until_caught_up=True)
            lag_sample(cluster="local", now=datetime.now(UTC))
        # Burrow calls a partition stopped only once none of its last `intervals` log end polls was at or behind
        # the last commit (it had caught up then): wait that out, as an on-call engineer would see it.
        time.sleep(max(0.0, stopped_growing_at + (INTERVALS + 2) * OFFSET_REFRESH_S - time.monotonic()))
        verdicts = {}
        for script in SCRIPTS:
            said = server.status(groups[script.name])
            assert said is not None, f"Burrow has no status for {script.name}"
            stored = GroupLagStatus.objects.get(cluster="local", group=groups[script.name])
            verdicts[script.name] = (
                (said["status"], {p["partition"]: p["status"] for p in said["partitions"]}, said["complete"]),
                (stored.status, {int(key.rsplit("-", 1)[1]): status
                                 for key, status in stored.partition_status.items()}, stored.reason))
    finally:
        for committer in committers.values():
            committer.close()
        del producer  # its connections go now, not at the session's end after the broker stopped

    for name, (said, stored) in verdicts.items():  # shown with -s, and in the report of a failure
        print(f"{name:17} Burrow {said[0]:4} {said[1]} complete {said[2]:g} | console {stored[0]:4} {stored[2]}")
    for script in SCRIPTS:
        (burrow_group, burrow_partitions, complete), (console_group, console_bad, reason) = verdicts[script.name]
        assert (burrow_group, burrow_partitions) == script.burrow, (script.name, verdicts[script.name])
        # Burrow calls a partition complete when its window holds `intervals` commits (the stopped group made 2)
        made = sum(script.commits(s, tuple(script.end(s, p) for p in range(len(script.backlog)))) is not None
                   for s in range(STEPS))
        assert complete == (1.0 if made >= INTERVALS else 0.0), (script.name, complete)
        console_partitions = {p: console_bad.get(p, "OK") for p in burrow_partitions}
        if script.console is None:
            expected = {p: CONSOLE_NAME[status] for p, status in burrow_partitions.items()}
            worst = max(expected.values(), key=["OK", "WARN", "STOP", "ERR"].index)
            assert (console_group, console_partitions) == (worst, expected), (script.name, reason)
            # Burrow's group is ERR for any of STOP, STALL and REWIND; the console keeps STOP apart.
            assert burrow_group == ("ERR" if console_group == "STOP" else console_group)
        else:
            assert (console_group, console_partitions) == script.console, (script.name, reason)


def _wait_until_burrow_stored(server: BurrowServer, script: Script, step: int, group: str, topic: str,
                              newest_commit_ms: dict) -> None:
    """Until Burrow's storage holds this step's commit of every partition: a newer commit than the one seen before
    (the same offset again is a new commit too), with the offset committed."""
    offsets = script.commits(step, tuple(script.end(step, p) for p in range(len(script.backlog))))
    if offsets is None:
        return

    def stored() -> bool:
        body = server.get(f"consumer/{group}")
        partitions = (body or {}).get("topics", {}).get(topic) or []
        for p, offset in enumerate(offsets):
            window = [o for o in (partitions[p].get("offsets") or []) if o] if p < len(partitions) else []
            if not window or window[-1]["offset"] != offset or \
                    window[-1]["timestamp"] <= newest_commit_ms.get((group, p), -1):
                return False
        for p in range(len(offsets)):
            newest_commit_ms[(group, p)] = [o for o in partitions[p]["offsets"] if o][-1]["timestamp"]
        return True

    wait_for(f"{group}'s commit of step {step}", stored)
