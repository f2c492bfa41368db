"""Which cluster and topic witness the audit log (settings AUDIT_WITNESS_*)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from console.clusters.models import Cluster


@dataclass(frozen=True)
class WitnessConfig:
    cluster: str
    topic: str

    @property
    def transactional_id(self) -> str:
        """One fixed id per topic: a second publisher, or one restarted after being killed mid-batch, fences the
        earlier one (see gateway.kafka.records_io.ops_append)."""
        return f"kafka-console-audit-witness.{self.topic}"

    @property
    def retention_ms(self) -> int:
        days = settings.AUDIT_WITNESS_RETENTION_DAYS
        return days * 86_400_000 if days > 0 else -1


def witness_config() -> WitnessConfig | None:
    """None when the witness is switched off or no cluster is registered to hold it. A named cluster is taken as
    named, even if it is not registered (publishing then reports that)."""
    if not settings.AUDIT_WITNESS_ENABLED:
        return None
    name = settings.AUDIT_WITNESS_CLUSTER
    if not name:
        names = list(Cluster.objects.order_by("pk").values_list("name", flat=True))
        if not names:
            return None
        name = settings.KAFKA_LOCAL_CLUSTER_NAME if settings.KAFKA_LOCAL_CLUSTER_NAME in names else names[0]
    return WitnessConfig(cluster=name, topic=settings.AUDIT_WITNESS_TOPIC)
