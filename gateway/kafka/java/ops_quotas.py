"""DescribeClientQuotas, through Kafka's Java Admin client (librdkafka has no client-quota API)."""

from __future__ import annotations

from gateway.kafka.java import bridge
from gateway.kafka.types import ClientQuota


class QuotaOps(bridge.JavaCalls):
    def describe_client_quotas(self) -> list[ClientQuota]:
        """Every quota set on a user, a client id, a pair of them, or their defaults."""
        found = self._java(lambda admin, jvm: admin.describeClientQuotas(
            jvm.org.apache.kafka.common.quota.ClientQuotaFilter.all()).entities())
        quotas = []
        for entity in found.keySet():
            parts = entity.entries()  # type -> name; a null name is the default entity of that type
            values = found.get(entity)
            quotas.append(ClientQuota(
                user=_name(parts, "user"), client_id=_name(parts, "client-id"),
                user_is_default=parts.containsKey("user") and parts.get("user") is None,
                client_id_is_default=parts.containsKey("client-id") and parts.get("client-id") is None,
                values={str(k): float(values.get(k)) for k in values.keySet()}))
        return sorted(quotas, key=lambda q: (q.user or "", q.user_is_default, q.client_id or "",
                                             q.client_id_is_default))


def _name(parts, kind: str) -> str | None:
    value = parts.get(kind) if parts.containsKey(kind) else None
    return str(value) if value is not None else None
