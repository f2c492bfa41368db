"""Each partition's size as a share of its retention.bytes, for the topic page's partitions tab: the brokers' own
figure (KIP-1257's RetentionSizeInPercent gauge, Kafka 4.3), as the broker sampler last read it over JMX
(brokers/selectors.py). Nothing here asks Kafka or JMX."""

from __future__ import annotations

from dataclasses import dataclass

from brokers.selectors import RetentionShares, topic_retention_shares

NEAR_PERCENT = 90  # at or above: shown as a warning (the alert rule's default threshold too)
MSG_NO_LIMIT = "retention.bytes is -1: the topic's partitions are not limited in size"
MSG_NO_CONFIG = "the topic's retention.bytes could not be read"
MSG_NO_JMX = ("the broker sampler reads it from the brokers' JMX, and does not read this cluster's: no metrics source, a "
              "Prometheus one, or sampling switched off (`manage.py brokers source`)")
MSG_UNHEARD = "no broker holding this partition gave figures at the last samples"
MSG_WHEN = ("the brokers recompute it at each retention check (log.retention.check.interval.ms); read at {at:%H:%M:%S}"
            " UTC")


@dataclass(frozen=True)
class RetentionCell:
    text: str  # "97 %", "no limit", "–", "?"
    percent: int | None  # the fullest replica's, as its broker said; None when there is no figure
    detail: str  # each replica's figure, or why there is none

    @property
    def near(self) -> bool:
        return self.percent is not None and self.percent >= NEAR_PERCENT


def retention_cells(partitions, retention_bytes: str | None,
                    shares: RetentionShares | None) -> dict[int, RetentionCell]:
    """partition -> its cell, for rows with `.partition` and `.replicas` (pure: the shares are passed in)."""
    if retention_bytes is None:
        return {p.partition: RetentionCell("–", None, MSG_NO_CONFIG) for p in partitions}
    if retention_bytes.strip() == "-1":
        return {p.partition: RetentionCell("no limit", None, MSG_NO_LIMIT) for p in partitions}
    if shares is None:
        return {p.partition: RetentionCell("–", None, MSG_NO_JMX) for p in partitions}
    cells = {}
    for p in partitions:
        found = shares.of(p.partition, tuple(p.replicas))
        if not found:
            cells[p.partition] = RetentionCell("?", None, MSG_UNHEARD)
            continue
        each = "; ".join(f"broker {broker}: {share} %" for broker, share in sorted(found.items()))
        when = MSG_WHEN.format(at=shares.read_at) if shares.read_at else ""
        cells[p.partition] = RetentionCell(f"{max(found.values())} %", max(found.values()), f"{each} ({when})")
    return cells


def topic_retention_cells(cluster: str, detail) -> dict[int, RetentionCell]:
    """The cells of a topics.selectors.TopicDetail."""
    limit = next((c.value for c in detail.configs if c.name == "retention.bytes"), None)
    shares = None if limit is None or limit.strip() == "-1" else topic_retention_shares(cluster, detail.name)
    return retention_cells(detail.partitions, limit, shares)
