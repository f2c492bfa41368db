"""ConnectClient: the REST API of one Kafka Connect cluster (any of its workers), typed. Every method is one
documented endpoint; each returns frozen values of gateway/kafka_connect/types.py carrying Connect's own JSON."""

from __future__ import annotations

from typing import Any

from gateway.kafka_connect.transport import ConnectEndpoint, Transport, path
from gateway.kafka_connect.types import (
    ConfigDefinition, ConfigValidation, ConnectorInfo, ConnectorOffsets, ConnectorOverview, ConnectorState,
    FieldCheck, OffsetEntry, PluginInfo, TaskState, WorkerInfo,
)


class ConnectClient:
    def __init__(self, endpoint: ConnectEndpoint) -> None:
        self.endpoint = endpoint
        self._http = Transport(endpoint)

    @property
    def name(self) -> str:
        return self.endpoint.name

    # -- reads -----------------------------------------------------------------------------------------------

    def worker_info(self) -> WorkerInfo:
        """GET /: the answering worker's Kafka version and the Kafka cluster its internal topics live on."""
        _, body = self._http.call("GET", "/")
        return WorkerInfo(str(body.get("version", "")), str(body.get("commit", "")),
                          str(body.get("kafka_cluster_id", "")))

    def plugins_rest(self, *, connectors_only: bool = True) -> list[dict]:
        """GET /connector-plugins (with connectorsOnly=false, converters and transformations too)."""
        query = None if connectors_only else [("connectorsOnly", "false")]
        return self._http.call("GET", "/connector-plugins", query=query)[1]

    def plugins(self, *, connectors_only: bool = True) -> list[PluginInfo]:
        return [PluginInfo(p["class"], p.get("type", ""), p.get("version", "") or "")
                for p in self.plugins_rest(connectors_only=connectors_only)]

    def plugin_config(self, plugin: str) -> list[ConfigDefinition]:
        """GET /connector-plugins/{plugin}/config (KIP-769): the settings the plugin itself declares."""
        _, body = self._http.call("GET", path("connector-plugins", plugin, "config"), what=f"plugin '{plugin}'")
        return [_definition(item) for item in body]

    def validate(self, plugin: str, config: dict[str, str]) -> ConfigValidation:
        """PUT /connector-plugins/{plugin}/config/validate: Connect's verdict on every setting, the plugin's and
        the framework's (name, topics, converters, ...), without creating anything."""
        _, body = self._http.call("PUT", path("connector-plugins", plugin, "config", "validate"), body=config,
                                  write=True, what=f"plugin '{plugin}'")
        fields = tuple(FieldCheck(definition=_definition(item["definition"]), value=item["value"].get("value"),
                                  errors=tuple(item["value"].get("errors") or ()),
                                  recommended=tuple(map(str, item["value"].get("recommended_values") or ())),
                                  visible=bool(item["value"].get("visible", True)))
                       for item in body.get("configs", []))
        return ConfigValidation(plugin=str(body.get("name", plugin)), error_count=int(body.get("error_count", 0)),
                                fields=fields, groups=tuple(str(g) for g in body.get("groups") or ()))

    def connector_names(self) -> list[str]:
        """GET /connectors: the names of every connector."""
        return list(self._http.call("GET", "/connectors")[1] or [])

    def connectors_rest(self) -> dict[str, dict]:
        """GET /connectors?expand=info&expand=status: every connector with its configuration and status, in one
        request."""
        return self._http.call("GET", "/connectors", query=[("expand", "info"), ("expand", "status")])[1] or {}

    def connectors(self) -> dict[str, ConnectorOverview]:
        return {name: ConnectorOverview(info=_info(entry["info"]), status=_state(entry["status"]), rest=entry)
                for name, entry in self.connectors_rest().items()}

    def connector(self, name: str) -> ConnectorInfo:
        """GET /connectors/{name}."""
        return _info(self._http.call("GET", path("connectors", name), what=_what(name))[1])

    def status(self, name: str) -> ConnectorState:
        """GET /connectors/{name}/status: the connector's and each task's state, worker and failure trace."""
        return _state(self._http.call("GET", path("connectors", name, "status"), what=_what(name))[1])

    def topics(self, name: str) -> list[str]:
        """GET /connectors/{name}/topics (KIP-558): the topics the connector has used since it was created or
        its topics were last reset."""
        _, body = self._http.call("GET", path("connectors", name, "topics"), what=_what(name))
        return list((body or {}).get(name, {}).get("topics", []))

    def offsets(self, name: str) -> ConnectorOffsets:
        """GET /connectors/{name}/offsets (KIP-875): a source connector's partition/offset maps from its offsets
        topic, a sink connector's committed offsets of its consumer group."""
        _, body = self._http.call("GET", path("connectors", name, "offsets"), what=_what(name))
        entries = tuple(OffsetEntry(dict(item.get("partition") or {}), item.get("offset"))
                        for item in (body or {}).get("offsets", []))
        return ConnectorOffsets(entries=entries, rest=body or {})

    # -- changes ---------------------------------------------------------------------------------------------

    def create(self, name: str, config: dict[str, str]) -> ConnectorInfo:
        """POST /connectors: 201 with the connector as stored; 409 if the name is taken."""
        _, body = self._http.call("POST", "/connectors", body={"name": name, "config": config}, write=True)
        return _info(body)

    def put_config(self, name: str, config: dict[str, str]) -> ConnectorInfo:
        """PUT /connectors/{name}/config: replaces the whole configuration (creates the connector if absent)."""
        _, body = self._http.call("PUT", path("connectors", name, "config"), body=config, write=True,
                                  what=_what(name))
        return _info(body)

    def pause(self, name: str) -> None:
        """PUT /connectors/{name}/pause: tasks stay assigned and keep their resources, but process nothing."""
        self._http.call("PUT", path("connectors", name, "pause"), write=True, what=_what(name))

    def resume(self, name: str) -> None:
        """PUT /connectors/{name}/resume: from PAUSED or STOPPED back to RUNNING."""
        self._http.call("PUT", path("connectors", name, "resume"), write=True, what=_what(name))

    def stop(self, name: str) -> None:
        """PUT /connectors/{name}/stop (KIP-875): the connector shuts down and its tasks are removed; only then
        may its offsets be altered or reset."""
        self._http.call("PUT", path("connectors", name, "stop"), write=True, what=_what(name))

    def restart(self, name: str, *, include_tasks: bool = False, only_failed: bool = False) -> None:
        """POST /connectors/{name}/restart (KIP-745): the connector, and with include_tasks its tasks, all or
        only the failed ones."""
        query = [("includeTasks", str(include_tasks).lower()), ("onlyFailed", str(only_failed).lower())]
        self._http.call("POST", path("connectors", name, "restart"), query=query, write=True, what=_what(name))

    def restart_task(self, name: str, task: int) -> None:
        """POST /connectors/{name}/tasks/{task}/restart."""
        self._http.call("POST", path("connectors", name, "tasks", task, "restart"), write=True,
                        what=f"task {task} of connector '{name}'")

    def delete(self, name: str) -> None:
        """DELETE /connectors/{name}: the connector and its tasks go; its offsets stay in Kafka."""
        self._http.call("DELETE", path("connectors", name), write=True, what=_what(name))

    def alter_offsets(self, name: str, entries: list[OffsetEntry]) -> str:
        """PATCH /connectors/{name}/offsets (KIP-875): writes the given partitions' offsets (None deletes one);
        Connect refuses unless the connector is STOPPED. Returns Connect's message."""
        _, body = self._http.call("PATCH", path("connectors", name, "offsets"), write=True, what=_what(name),
                                  body={"offsets": [entry.as_rest() for entry in entries]})
        return str((body or {}).get("message", ""))

    def reset_offsets(self, name: str) -> str:
        """DELETE /connectors/{name}/offsets (KIP-875): forgets every offset (a sink connector's consumer group
        offsets, a source connector's records in its offsets topic); only while STOPPED."""
        _, body = self._http.call("DELETE", path("connectors", name, "offsets"), write=True, what=_what(name))
        return str((body or {}).get("message", ""))


def _what(name: str) -> str:
    return f"connector named '{name}'"


def _whole(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _definition(item: dict[str, Any]) -> ConfigDefinition:
    return ConfigDefinition(name=str(item["name"]), type=str(item.get("type", "STRING")),
                            required=bool(item.get("required")), default_value=item.get("default_value"),
                            importance=str(item.get("importance") or ""),
                            documentation=str(item.get("documentation") or ""), group=item.get("group"),
                            display_name=str(item.get("display_name") or item["name"]),
                            order=_whole(item.get("order_in_group", item.get("order")), -1))


def _info(body: dict) -> ConnectorInfo:
    return ConnectorInfo(name=body["name"], type=str(body.get("type") or "unknown"),
                         config={str(k): "" if v is None else str(v) for k, v in (body.get("config") or {}).items()},
                         tasks=tuple(int(t["task"]) for t in body.get("tasks") or ()), rest=body)


def _state(body: dict) -> ConnectorState:
    connector = body.get("connector") or {}
    tasks = tuple(TaskState(id=int(t["id"]), state=str(t.get("state", "")), worker_id=str(t.get("worker_id", "")),
                            trace=str(t.get("trace") or "")) for t in body.get("tasks") or ())
    return ConnectorState(name=body["name"], type=str(body.get("type") or "unknown"),
                          state=str(connector.get("state", "")), worker_id=str(connector.get("worker_id", "")),
                          trace=str(connector.get("trace") or ""), tasks=tasks, rest=body)
