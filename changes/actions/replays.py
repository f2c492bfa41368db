"""The replay a request can hold: a Spark replay whose sink is a topic, protected as that topic (on the sink's
cluster) is. The request keeps the range pinned to the offsets its preview resolved (`offsets:P=O` bounds), so the
approver submits the very records the requester saw planned, whatever producers or the source group did since.
Its fingerprint is the sink topic's id (a topic deleted and made again under the name is another destination) and
the range read again (retention may have removed part of it)."""

from __future__ import annotations

from changes.registry import ChangeAction, Plan, fingerprint_of
from console.accounts.roles import Role
from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from sparkjobs import services as replays
from sparkjobs.models import ReplayJob
from sparkjobs.selectors import resolve_range

REPLAY = "replay.run"


def _bound(ranges: dict, side: int) -> str:
    return "offsets:" + ",".join(f"{p}={r[side]}" for p, r in sorted(ranges.items()))


def replay_kwargs(*, cluster: str, topic: str, partitions: list[int] | None, start: str, end: str, sink_topic: str,
                  sink_cluster: str, keep_partitions: bool, filter_expr: str, isolation: str) -> dict:
    """What a request keeps of a replay into a topic: its bounds resolved now and pinned, the bounds as asked for
    people."""
    resolved = resolve_range(cluster, topic, partitions, start, end, isolation=isolation)
    if resolved.planned == 0:
        raise ConsoleError(replays.MSG_NOTHING_TO_REPLAY)
    return {"cluster": cluster, "topic": topic, "partitions": sorted(resolved.ranges),
            "start": _bound(resolved.ranges, 0), "end": _bound(resolved.ranges, 1),
            "asked": {"start": start, "end": end}, "sink_topic": sink_topic, "sink_cluster": sink_cluster or "",
            "keep_partitions": keep_partitions, "filter_expr": filter_expr, "isolation": isolation}


def destination_cluster(kwargs: dict) -> str:
    return kwargs["sink_cluster"] or kwargs["cluster"]


def _plan(cluster: str, kwargs: dict) -> Plan:
    resolved = resolve_range(kwargs["cluster"], kwargs["topic"], kwargs["partitions"], kwargs["start"], kwargs["end"],
                             isolation=kwargs["isolation"])
    sink = cluster_admin(cluster).describe_topics([kwargs["sink_topic"]])[kwargs["sink_topic"]]
    ranges = {str(p): list(r) for p, r in sorted(resolved.ranges.items())}
    summary = {"source": f"{kwargs['cluster']}/{kwargs['topic']}", "destination": f"{cluster}/{kwargs['sink_topic']}",
               "asked": kwargs.get("asked"), "ranges": ranges, "planned_records": resolved.planned,
               "filter": kwargs["filter_expr"], "isolation": kwargs["isolation"],
               "keep_partitions": kwargs["keep_partitions"], "destination_topic_id": sink.topic_id}
    return Plan(summary=summary, fingerprint=fingerprint_of({"topic_id": sink.topic_id, "ranges": ranges}))


def _run(*, actor, cluster: str, kwargs: dict, reason: str, fingerprint: str):
    job = replays.replay_submit(actor=actor, cluster=kwargs["cluster"], topic=kwargs["topic"],
                                partitions=kwargs["partitions"], start=kwargs["start"], end=kwargs["end"],
                                sink=ReplayJob.Sink.TOPIC, sink_topic=kwargs["sink_topic"],
                                sink_cluster=kwargs["sink_cluster"], keep_partitions=kwargs["keep_partitions"],
                                filter_expr=kwargs["filter_expr"], isolation=kwargs["isolation"], reason=reason)
    return {"job": job.pk, "planned_records": job.planned_records, "ranges": job.ranges}


def _target(kwargs: dict) -> str:
    return f"topic:{kwargs['sink_topic']}"


ACTIONS = (ChangeAction(REPLAY, "replay into a topic", Role.OPERATOR, _target, _plan, _run),)
