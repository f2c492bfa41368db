"""One group sampled and judged now, outside the sweep: after a change made here (a reset, a revert, committed
offsets deleted), so that its status, its total lag, the groups list and the chart's last point all describe the
offsets Kafka holds after the change instead of the sample before it (a reset to zero lag that still read STOP with
"lag 160" until the next sweep).

The sample is stored exactly as a sweep stores one (offsets/lag/sampler.py), so the next sweep extends the same
window. It records an observation and changes nothing in Kafka, so it writes no audit event.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.conf import settings

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import LATEST, STABLE, GroupListing
from offsets.lag.observe import Asked
from offsets.lag.sampler import store_groups

log = logging.getLogger(__name__)
SAMPLED_KINDS = ("consumer", "streams")  # share groups commit no offsets: the sweep leaves them out too


def lag_recheck_group(*, cluster: str, group: str, kind, now: datetime | None = None) -> bool:
    """Samples `group` (of GroupKind `kind`) now: its state and positions (the kind's own calls), then one
    ListOffsets round (log end and last stable offsets) for them; stores and judges it as a sweep would. Returns
    whether it did: a share group, or a cluster that fails to answer, leaves the status to the next sweep (logged,
    never raised: the change it follows has been made and audited)."""
    if kind.name not in SAMPLED_KINDS:
        return False
    now = now or datetime.now(UTC)
    try:
        state = kind.reset_state(cluster, group)
        refs = sorted(state.positions)
        found = cluster_admin(cluster).list_offsets_many(refs, [LATEST, STABLE], strict=False) if refs else {}
    except (KafkaGatewayError, ConsoleError) as exc:
        log.warning("Lag of %s on %s not re-checked after a change: %s", group, cluster, exc.message)
        return False
    ends = {ref: at.offset for ref, at in found.get(LATEST, {}).items()}
    stables = {ref: at.offset for ref, at in found.get(STABLE, {}).items()}
    listing = GroupListing(group_id=group, state=state.state, protocol=getattr(state.description, "protocol", ""),
                           group_type=kind.name)
    store_groups(cluster, now, [listing], Asked([group], {group: dict(state.positions)}, ends, stables),
                 size=settings.LAG_STATUS_WINDOW)
    return True
