import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from offsets.models import GroupGeneration, LagSample
from offsets.lag.selectors import group_lag_chart, step_for

pytestmark = pytest.mark.kafka


def add_samples(group, topic, *, minutes=10, lag0=1000, consumed=100, produced=50, now=None, step=0):
    """A sample every 30 s over the last `minutes`: the group commits `consumed` and producers add `produced`
    records per sample."""
    now = now or datetime.now(UTC)
    count = minutes * 2
    rows = []
    for i in range(count + 1):
        at = now - timedelta(seconds=30 * (count - i))
        committed, end = 10_000 + consumed * i, 10_000 + lag0 + produced * i
        rows.append(LagSample(cluster="local", group=group, topic=topic, step=step, time=at, lag=end - committed,
                              lag_max=end - committed, committed=committed, end=end, partitions=1))
    LagSample.objects.bulk_create(rows)


def store_status(group, partitions, *, now, minutes=10, status="OK"):
    """The group's stored status over the same samples as add_samples writes (its last LAG_STATUS_WINDOW)."""
    from offsets.lag.window import LagWindow
    from offsets.models import GroupLagStatus

    window, count = LagWindow(), minutes * 2
    for i in range(count + 1):
        at = (now - timedelta(seconds=30 * (count - i))).timestamp()
        observed = {key: (10_000 + p.get("consumed", 100) * i, 10_000 + p["lag0"] + p.get("produced", 50) * i)
                    for key, p in partitions.items()}
        window = window.append(at, observed, 10)
    GroupLagStatus.objects.create(cluster="local", group=group, status=status, reason="", window=window.to_bytes(),
                                  totals=[t for t in window.totals()], sampled_at=now)


@pytest.fixture
def real_group(topic_factory, produce, commit):
    topic = topic_factory("chart")
    produce(topic, [(0, None, b"x", None)] * 3)
    group = f"chart-{uuid.uuid4().hex[:8]}"
    commit(group, {(topic, 0): 1})
    return group, topic


def test_group_page_draws_the_lag_per_topic_with_rebalances_and_the_catch_up_estimate(real_group, local_cluster,
                                                                                        client_for, viewer):
    group, topic = real_group
    now = datetime.now(UTC)  # one sweep time for both topics, as the sampler writes them
    add_samples(group, topic, lag0=5000, now=now)
    add_samples(group, "other-topic", lag0=10, consumed=0, produced=0, now=now)
    store_status(group, {f"{topic}-0": dict(lag0=5000), "other-topic-0": dict(lag0=10, consumed=0, produced=0)},
                 now=now)
    GroupGeneration.objects.create(cluster="local", group=group, protocol="classic", generation=3,
                                   time=datetime.now(UTC) - timedelta(minutes=4),
                                   members=[{"member_id": "m1", "client_id": "c", "host": "/h", "assignment": []}])

    page = client_for(viewer).get(f"/clusters/local/groups/{group}/", {"tab": "history"}).content.decode()

    chart = re.search(r'<div id="lag-chart".*?</svg>', page, re.S).group(0)
    assert {"all topics", topic, "other-topic"} == set(re.findall(r'data-series="([^"]+)"', chart))
    assert "<title>rebalance: generation 3, 1 member</title>" in chart
    # One sample: the status's total and the chart's last point
    assert 'id="total-lag" data-value="4010"' in page and "all topics: 4,010 now" in page
    # 100 consumed and 50 produced every 30 s: 3.3/s against 1.7/s, so 4,010 left take 4,010 / (5/3) s = 40 min
    assert "consuming 3.3 records/s, producing 1.7 records/s" in page
    assert "the lag of 4,010 is gone in about 40 min" in page


def test_range_links_swap_only_the_chart_and_coarse_ranges_use_buckets(real_group, local_cluster, client_for,
                                                                       viewer):
    group, topic = real_group
    now = datetime.now(UTC)
    LagSample.objects.create(cluster="local", group=group, topic=topic, step=3600, time=now - timedelta(days=10),
                             lag=7, lag_max=77_000, committed=1, end=8, partitions=1)
    add_samples(group, topic, minutes=5)
    client = client_for(viewer)

    partial = client.get(f"/clusters/local/groups/{group}/lag/", {"range": "30d"}, headers={"HX-Request": "true"})
    body = partial.content.decode()
    assert body.lstrip().startswith('<div id="lag-chart"') and "<html" not in body
    assert "hourly buckets" in body and "peak 77,000" in body
    six_hours = client.get(f"/clusters/local/groups/{group}/lag/", {"range": "6h"},
                           headers={"HX-Request": "true"}).content.decode()
    assert "every sample" in six_hours and "77,000" not in six_hours
    full = client.get(f"/clusters/local/groups/{group}/lag/", {"range": "bogus"})
    assert "<html" in full.content.decode() and 'class="current" aria-current="true">6h<' in full.content.decode()


def test_topic_page_shows_the_groups_with_most_lag(topic_factory, local_cluster, client_for, viewer):
    topic = topic_factory("lagged")
    groups = [f"reader-{i}-{uuid.uuid4().hex[:6]}" for i in range(9)]
    for i, group in enumerate(groups):
        add_samples(group, topic, minutes=3, lag0=100 * (i + 1), consumed=0, produced=0)

    page = client_for(viewer).get(f"/clusters/local/topics/{topic}/", {"tab": "consumers"}).content.decode()

    shown = set(re.findall(r'data-series="([^"]+)"', page))
    assert shown == set(groups[1:])  # the group with the least lag is left out: 8 lines at most


def test_viewers_only(real_group, local_cluster, client):
    group, topic = real_group
    response = client.get(f"/clusters/local/groups/{group}/lag/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_step_for_uses_the_finest_step_that_covers_the_range(settings):
    settings.LAG_RETENTION_S = {0: 6 * 3600, 300: 3 * 86400, 3600: 60 * 86400}
    assert [step_for(s) for s in (3600, 6 * 3600, 86400, 3 * 86400, 7 * 86400, 90 * 86400)] == [0, 0, 300, 300,
                                                                                                 3600, 3600]


def test_a_coarse_chart_reaches_now_with_the_raw_samples_not_yet_rolled_up(real_group, local_cluster):
    from offsets.lag.sampler import lag_rollup

    group, topic = real_group
    now = datetime.now(UTC)
    add_samples(group, topic, minutes=30, now=now, lag0=1000, consumed=0, produced=1)
    lag_rollup(cluster="local", now=now)
    assert LagSample.objects.filter(group=group, step=300).exists()
    chart = group_lag_chart("local", group, "24h", now=now)
    assert chart.step == 300
    (line,) = chart.geometry.lines
    assert line.last == 1060 and line.peak == 1060
    last_x = float(line.paths[-1].split()[-1].split(",")[0])
    assert chart.geometry.right - last_x < 2


def test_lag_history_command(local_cluster, capsys):
    import json

    from django.core.management import CommandError, call_command

    from offsets.models import GroupLagStatus

    now = datetime.now(UTC)
    add_samples("cli-group", "orders", minutes=1, now=now)  # 3 samples: lag 1000, 950, 900
    GroupLagStatus.objects.create(cluster="local", group="cli-group", status="WARN", reason="orders-0: lag grew")

    call_command("lag_history", "cli-group", "--range", "1h", "--format", "json")
    history = json.loads(capsys.readouterr().out)
    assert (history["status"], history["step_s"]) == ("WARN", 0)
    assert [(s["topic"], s["lag"], s["committed"]) for s in history["samples"]] == [
        ("orders", 1000, 10_000), ("orders", 950, 10_100), ("orders", 900, 10_200)]
    call_command("lag_history", "cli-group")
    table = capsys.readouterr().out
    assert table.startswith("cli-group: WARN (orders-0: lag grew)") and "10,200" in table
    with pytest.raises(CommandError, match="no cluster named 'nope'"):
        call_command("lag_history", "cli-group", "--cluster", "nope")
