"""Broker health pages: read what the sampler stored (never JMX or Kafka), so they answer at once whatever the
brokers do. Ranges are swapped in with htmx. A broker page's log directories are a section of their own that the
page loads after it shows (they are asked of the broker), with the admin's cordon and uncordon, previewed first."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from brokers import services
from brokers.charts import chart
from brokers.forms import CORDON, CordonForm
from brokers.log_dirs import ALL, broker_log_dirs
from brokers.selectors import FIGURES, cluster_health
from console.accounts.decorators import role_required
from console.accounts.roles import Role
from console.audit.actor import Actor
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.http import HtmxHttpRequest, redirect_after_change, valid_data
from gateway.kafka.errors import KafkaGatewayError

MSG_NO_BROKER = "Broker {broker} of cluster '{cluster}' has no metrics: the sampler has never read it."


def _cluster_charts(cluster: str, range_key: str | None, *, broker: int | None = None) -> list:
    throughput = [("bytes in", "bytes_in"), ("bytes out", "bytes_out")]
    charts = [chart(cluster, title="Throughput", series=throughput, unit="bytes/s", range_key=range_key, broker=broker),
              chart(cluster, title="Messages in", series=[("messages in", "messages_in")], unit="messages/s",
                    range_key=range_key, broker=broker),
              chart(cluster, title="Requests", series=[("produce", "produce_requests"),
                                                       ("consumer fetch", "fetch_requests")],
                    unit="requests/s", range_key=range_key, broker=broker)]
    if broker is not None:
        charts += [chart(cluster, title="p99 total time", series=[("produce", "produce_p99_ms"),
                                                                  ("consumer fetch", "fetch_p99_ms")],
                         unit="ms", range_key=range_key, broker=broker),
                   chart(cluster, title="Idle", series=[("request handlers", "request_idle_pct"),
                                                        ("network processors", "network_idle_pct")],
                         unit="%", range_key=range_key, broker=broker)]
    charts.append(chart(cluster, title="Partitions at risk", series=[
        ("under-replicated", "under_replicated"), ("under min ISR", "under_min_isr"),
        ("offline", "offline_partitions")], unit="partitions", range_key=range_key, broker=broker))
    return charts


@require_GET
@role_required(Role.VIEWER)
def cluster_overview(request: HtmxHttpRequest, cluster: str):
    """Health tiles per broker (or why a broker's JMX gave nothing) and the cluster's charts."""
    cluster_get(cluster)
    range_key = request.GET.get("range")
    context = {"cluster": cluster, "health": cluster_health(cluster), "figures": FIGURES,
               "charts": _cluster_charts(cluster, range_key), "range_key": range_key or "1h"}
    target = request.headers.get("HX-Target", "")
    partial = {"health-tiles": "#health-tiles", "broker-charts": "#broker-charts"}.get(target)
    return render(request, f"brokers/overview.html{partial}" if request.htmx and partial else "brokers/overview.html",
                  context)


@require_GET
@role_required(Role.VIEWER)
def broker_page(request: HtmxHttpRequest, cluster: str, broker_id: int):
    cluster_get(cluster)
    health = cluster_health(cluster)
    tile = next((t for t in health.tiles if t.broker == broker_id), None)
    range_key = request.GET.get("range")
    # A broker without metrics still has its page: its log directories are asked of Kafka, not of the sampler.
    context = {"cluster": cluster, "health": health, "tile": tile, "figures": FIGURES, "broker_id": broker_id,
               "no_metrics": MSG_NO_BROKER.format(broker=broker_id, cluster=cluster) if tile is None else "",
               "charts": _cluster_charts(cluster, range_key, broker=broker_id), "range_key": range_key or "1h"}
    return render(request, "brokers/broker.html#broker-charts" if request.htmx else "brokers/broker.html", context)


@require_GET
@role_required(Role.VIEWER)
def topic_chart(request: HtmxHttpRequest, cluster: str, topic: str):
    """The topic's throughput summed over its brokers, with resets and changes of the topic as markers (a partial
    the topic page loads)."""
    cluster_get(cluster)
    range_key = request.GET.get("range")
    charts = [chart(cluster, title="Throughput", series=[("bytes in", "bytes_in"), ("bytes out", "bytes_out")],
                    unit="bytes/s", range_key=range_key, topic=topic),
              chart(cluster, title="Messages in", series=[("messages in", "messages_in")], unit="messages/s",
                    range_key=range_key, topic=topic)]
    return render(request, "brokers/_topic_charts.html", {"cluster": cluster, "topic": topic, "charts": charts,
                                                          "range_key": range_key or "1h"})


@require_GET
@role_required(Role.VIEWER)
def broker_log_dirs_section(request: HtmxHttpRequest, cluster: str, broker_id: int):
    """The broker's log directories asked now (DescribeLogDirs, its cordoned.log.dirs): a section the broker page
    loads. A broker that does not answer is said in the section, not over the page."""
    cluster_get(cluster)
    context = {"cluster": cluster, "broker_id": broker_id, "form": CordonForm(), "all": ALL}
    try:
        context["state"] = broker_log_dirs(cluster, broker_id)
    except (ConsoleError, KafkaGatewayError) as exc:
        context["error"] = exc.message
    return render(request, "brokers/_log_dirs.html", context)


@require_POST
@role_required(Role.ADMIN)
def log_dirs_preview(request: HtmxHttpRequest, cluster: str, broker_id: int):
    cluster_get(cluster)
    form = CordonForm(request.POST)
    data = valid_data(form)
    plan = services.log_dirs_preview(cluster=cluster, broker_id=broker_id, log_dirs=form.dirs(),
                                     cordon=data["action"] == CORDON)
    return render(request, "brokers/_cordon_preview.html", {"cluster": cluster, "broker_id": broker_id, "plan": plan,
                                                            "form_data": data})


@require_POST
@role_required(Role.ADMIN)
def log_dirs_apply(request: HtmxHttpRequest, cluster: str, broker_id: int):
    cluster_get(cluster)
    form = CordonForm(request.POST)
    data = valid_data(form)
    change = services.broker_log_dir_cordon if data["action"] == CORDON else services.broker_log_dir_uncordon
    done = change(actor=Actor.from_request(request), cluster=cluster, broker_id=broker_id, log_dirs=form.dirs(),
                  reason=data["reason"], expected_before=data["before"] if "before" in request.POST else None)
    cordoned = ", ".join(done["now"]["cordoned"]) or "none"
    messages.success(request, f"Broker {broker_id}: {data['action']}ed {', '.join(form.dirs())}. Cordoned now: "
                              f"{cordoned}.")
    # No #fragment: a redirect to the page it came from, differing only in one, would not reload it.
    return redirect_after_change(request, reverse("brokermetrics:broker", args=[cluster, broker_id]))
