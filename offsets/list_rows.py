"""The rows of the groups list page: state and members asked now, topics and total lag from the lag sweep.

A page of 50 consumer groups used to cost three Kafka requests per load (DescribeGroups, their OffsetFetch through
the Java client, a ListOffsets round over every partition they commit). On a big, busy cluster the last two were
most of the page's time, and they gave a lag that could disagree with the status and sparkline beside it, which the
sweep judged on its own sample. Now the lag shown is the one the status was judged on (the sweep's samples of the
group, one database query for the page), and only DescribeGroups is asked, for what changes between sweeps and
matters at 3 a.m.: whether the group has members. A group the sweep has not sampled yet (created since) is asked
for its offsets as before; the group's own page always asks Kafka for everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from console.clusters.selectors import cluster_admin
from gateway.kafka.types import GroupListing
from console.timing import in_request
from offsets.group_listing import OTHER_TYPES
from offsets.lag.selectors import GroupStatusView, sampled_topics
from offsets.selectors import GroupRow, group_rows


def group_list_rows(cluster: str, listings: Sequence[GroupListing],
                    statuses: dict[str, GroupStatusView]) -> list[GroupRow]:
    """A row per listed group still known to Kafka, in the listings' order. `statuses`: the page's lag statuses
    (offsets.lag.selectors.group_statuses)."""
    sampled = {g.group_id: statuses[g.group_id] for g in listings
               if g.group_type not in OTHER_TYPES and g.group_id in statuses
               and statuses[g.group_id].sampled_at is not None}
    unsampled = [g for g in listings if g.group_id not in sampled]
    live: dict[str, GroupRow] = {}
    described = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        describe = in_request(cluster_admin(cluster).describe_groups)
        describing = pool.submit(describe, list(sampled)) if sampled else None
        if unsampled:  # new groups, share and streams groups: everything asked, as the shell's list does
            live = {row.group_id: row for row in group_rows(cluster, unsampled)}
        topics = sampled_topics(cluster, {group: status.sampled_at for group, status in sampled.items()})
        if describing is not None:
            described = describing.result()
    rows = []
    for listing in listings:
        group_id = listing.group_id
        if group_id not in sampled:
            if group_id in live:
                rows.append(live[group_id])
            continue
        description = described.get(group_id)
        if description is not None and description.state == "Dead":  # deleted since the list was taken
            continue
        rows.append(GroupRow(
            group_id=group_id, protocol=listing.protocol,
            state=description.state if description else listing.state,
            members=len(description.members) if description else 0,
            topics=topics.get(group_id, ()), lag=sampled[group_id].lag))
    return rows
