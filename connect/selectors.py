"""Reads of Connect clusters: the connectors of every Connect cluster registered beside a Kafka cluster (each asked
side by side, each bounded, one that is down named instead of listed), a connector's page, plugins and validation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from connect.masking import mask_config, scrub_text
from connect.models import ConnectCluster, ConnectorEvent
from connect.plugin_form import PluginForm, plugin_form
from connect.registration import connect_client, connect_cluster_get, connect_clusters
from gateway.kafka_connect.errors import ConnectError
from gateway.kafka_connect.types import SINK, ConnectorInfo, ConnectorOverview, ConnectorState, PluginInfo
from console.errors import ConsoleError

SORTS = ("name", "state", "type", "failed", "plugin", "connect")
TOPIC_LOOKUPS = 8  # connectors whose topics are asked at once


@dataclass(frozen=True)
class ConnectorRow:
    connect: str
    name: str
    type: str
    state: str
    plugin: str
    tasks_running: int
    tasks_failed: int
    tasks_total: int
    topics: tuple[str, ...]


@dataclass(frozen=True)
class ConnectorsPage:
    rows: list[ConnectorRow]
    total: int  # before filtering
    problems: dict[str, str] = field(default_factory=dict)  # Connect cluster -> why it is not listed
    registrations: list[ConnectCluster] = field(default_factory=list)


def connector_row(connect: str, overview: ConnectorOverview, topics: list[str]) -> ConnectorRow:
    status = overview.status
    return ConnectorRow(connect=connect, name=overview.name, type=overview.info.type, state=status.state,
                        plugin=overview.info.plugin.rsplit(".", 1)[-1], tasks_running=status.tasks_running,
                        tasks_failed=status.tasks_failed, tasks_total=len(status.tasks), topics=tuple(topics))


def _connect_rows(registration: ConnectCluster) -> list[ConnectorRow]:
    client = connect_client(registration)
    overviews = client.connectors()

    def topics(name: str) -> list[str]:
        try:
            return client.topics(name)
        except ConnectError:
            return []  # deleted meanwhile, or topic tracking off: the row still shows

    with ThreadPoolExecutor(max_workers=max(1, min(TOPIC_LOOKUPS, len(overviews)))) as pool:
        found = dict(zip(overviews, pool.map(topics, list(overviews)), strict=True))
    return [connector_row(registration.name, overview, found[name]) for name, overview in overviews.items()]


def filter_rows(rows: list[ConnectorRow], *, query: str = "", state: str = "", type: str = "", connect: str = "",
                sort: str = "name") -> list[ConnectorRow]:
    """Rows whose name, plugin or a topic contains `query` (any case), in `state`, of `type`, of `connect`."""
    query = query.strip().lower()
    chosen = [row for row in rows
              if (not query or query in row.name.lower() or query in row.plugin.lower()
                  or any(query in t.lower() for t in row.topics))
              and (not state or row.state == state) and (not type or row.type == type)
              and (not connect or row.connect == connect)]
    keys = {"name": lambda r: (r.name, r.connect), "state": lambda r: (r.state, r.name),
            "type": lambda r: (r.type, r.name), "failed": lambda r: (-r.tasks_failed, r.name),
            "plugin": lambda r: (r.plugin, r.name), "connect": lambda r: (r.connect, r.name)}
    return sorted(chosen, key=keys.get(sort.lstrip("-"), keys["name"]), reverse=sort.startswith("-"))


def connectors_overview(cluster: str, **filters) -> ConnectorsPage:
    """Every Connect cluster of `cluster` is asked at once, so one that is down costs one timeout, not one each."""
    registrations = connect_clusters(cluster)
    rows: list[ConnectorRow] = []
    problems: dict[str, str] = {}

    def ask(registration: ConnectCluster):
        try:
            return registration.name, _connect_rows(registration), ""
        except (ConnectError, ConsoleError) as exc:
            return registration.name, [], exc.message

    if registrations:
        with ThreadPoolExecutor(max_workers=min(8, len(registrations))) as pool:
            for name, found, problem in pool.map(ask, registrations):
                rows += found
                if problem:
                    problems[name] = problem
    return ConnectorsPage(rows=filter_rows(rows, **filters), total=len(rows), problems=problems,
                          registrations=registrations)


def declared_secrets(client, plugin: str) -> frozenset[str]:
    """The settings the plugin declares as passwords; none when the plugin is not installed on the worker."""
    if not plugin:
        return frozenset()
    try:
        return frozenset(d.name for d in client.plugin_config(plugin) if d.secret)
    except ConnectError:
        return frozenset()


def connector_form(client, plugin: PluginInfo, *, open_names: frozenset[str] = frozenset()) -> PluginForm:
    """The create form of `plugin` from Connect's validation of a configuration holding only its class (which
    lists every setting the worker takes, the framework's and the plugin's; nothing is created)."""
    validation = client.validate(plugin.class_name, {"connector.class": plugin.class_name})
    return plugin_form(validation, plugin_label=plugin.short_name, open_names=open_names)


def sink_group(info: ConnectorInfo) -> str | None:
    """The consumer group a sink connector commits to: connect-NAME unless the connector overrides it."""
    if info.type != SINK:
        return None
    return info.config.get("consumer.override.group.id") or f"connect-{info.name}"


@dataclass(frozen=True)
class ConnectorDetail:
    connect: str
    info: ConnectorInfo
    status: ConnectorState
    config: dict  # masked
    topics: list[str]
    group: str | None
    history: list[ConnectorEvent]


def scrubbed_status(status: ConnectorState, config: dict, secrets: frozenset[str]) -> ConnectorState:
    """The status with the configuration's secrets taken out of its failure traces (an exception's message may
    quote a URL with its credentials, or a value)."""
    tasks = tuple(replace(task, trace=scrub_text(task.trace, config, secrets)) for task in status.tasks)
    return replace(status, trace=scrub_text(status.trace, config, secrets), tasks=tasks)


def connector_detail(cluster: str, connect: str, name: str) -> ConnectorDetail:
    registration = connect_cluster_get(cluster, connect)
    client = connect_client(registration)
    info = client.connector(name)
    secrets = declared_secrets(client, info.plugin)
    status = scrubbed_status(client.status(name), info.config, secrets)
    try:
        topics = client.topics(name)
    except ConnectError:
        topics = []
    history = list(ConnectorEvent.objects.filter(cluster=cluster, connect=connect, connector=name)[:200])
    for event in history:  # shown, never saved
        event.trace = scrub_text(event.trace, info.config, secrets)
    return ConnectorDetail(connect=connect, info=info, status=status, config=mask_config(info.config, secrets),
                           topics=topics, group=sink_group(info), history=history)
