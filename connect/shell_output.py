"""What `manage.py connect` prints: tables for people, and for --format json exactly what Connect's REST API answers
for the same state (configuration secrets masked, as everywhere)."""

from __future__ import annotations

import json

from connect.masking import mask_config, mask_rest
from connect.connector_offsets.preview import OffsetsPreview
from connect.selectors import declared_secrets
from gateway.kafka_connect.types import ConnectorOffsets

MISSING = "-"


def table(headers: list[str], rows: list[list]) -> list[str]:
    cells = [[MISSING if c is None or c == "" else str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    return [" ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
            for line in [headers, *cells]]


def dumps(value) -> str:
    return json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False)


def masked_entries(client, entries: dict[str, dict]) -> dict[str, dict]:
    """GET /connectors?expand=info&expand=status, each connector's configuration masked by its plugin's
    declared passwords and the names of secrets."""
    plugins = {e.get("info", {}).get("config", {}).get("connector.class", "") for e in entries.values()}
    secrets = {plugin: declared_secrets(client, plugin) for plugin in plugins}
    return {name: mask_rest(entry, secrets[entry.get("info", {}).get("config", {}).get("connector.class", "")])
            for name, entry in entries.items()}


def masked_info(client, info_rest: dict) -> dict:
    plugin = (info_rest.get("config") or {}).get("connector.class", "")
    return mask_rest(info_rest, declared_secrets(client, plugin))


def list_lines(entries: dict[str, dict]) -> list[str]:
    rows = []
    for name, entry in entries.items():
        status, info = entry.get("status", {}), entry.get("info", {})
        tasks = status.get("tasks", [])
        rows.append([name, info.get("type"), status.get("connector", {}).get("state"),
                     sum(1 for t in tasks if t.get("state") == "RUNNING"),
                     sum(1 for t in tasks if t.get("state") == "FAILED"), len(tasks),
                     (info.get("config") or {}).get("connector.class", "").rsplit(".", 1)[-1]])
    return table(["CONNECTOR", "TYPE", "STATE", "RUNNING", "FAILED", "TASKS", "PLUGIN"], rows)


def describe_lines(info: dict, status: dict, topics: list[str], secrets) -> list[str]:
    connector = status.get("connector", {})
    lines = [f"Connector {info['name']} ({info.get('type')}): {connector.get('state')} on {connector.get('worker_id')}"]
    if connector.get("trace"):
        lines.append(connector["trace"])
    lines += table(["TASK", "STATE", "WORKER"], [[t["id"], t.get("state"), t.get("worker_id")]
                                                  for t in status.get("tasks", [])])
    for task in status.get("tasks", []):
        if task.get("trace"):
            lines += [f"Task {task['id']} failed:", task["trace"]]
    lines.append("Topics: " + (", ".join(topics) or MISSING))
    lines += ["Configuration:", *table(["KEY", "VALUE"], sorted(mask_config(info.get("config") or {},
                                                                            secrets).items()))]
    return lines


def offsets_lines(offsets: ConnectorOffsets) -> list[str]:
    return table(["PARTITION", "OFFSET"], [[json.dumps(e.partition, sort_keys=True, ensure_ascii=False),
                                            MISSING if e.offset is None else json.dumps(e.offset, sort_keys=True)]
                                           for e in offsets.entries])


def preview_lines(preview: OffsetsPreview) -> list[str]:
    def text(value) -> str:
        return "(none)" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)

    lines = table(["PARTITION", "BEFORE", "AFTER", ""],
                  [[text(r.partition), text(r.before), text(r.after), "" if r.changes else "unchanged"]
                   for r in preview.rows])
    if preview.plan is not None:
        lines += ["", *table(["TOPIC", "PARTITION", "CURRENT", "NEW-OFFSET", "LOG-START", "LOG-END", "NOTE"],
                             [[r.ref.topic, r.ref.partition, r.current, r.target, r.log_start, r.log_end,
                               ("clamped; " if r.clamped else "") + r.note] for r in preview.plan.rows])]
    return lines


def offsets_preview_json(preview: OffsetsPreview) -> dict:
    """`connect offsets NAME <change> --format json` without --yes (and the API's preview): each partition's offset
    before and after, whether Connect would take the change now (STOPPED), and the fingerprint to give back."""
    body = {"connect": preview.connect, "connector": preview.connector, "type": preview.type, "state": preview.state,
            "allowed": preview.allowed, "strategy": preview.strategy, "fingerprint": preview.fingerprint,
            "partitions": [{"partition": r.partition, "before": r.before, "after": r.after, "changes": r.changes}
                           for r in preview.rows]}
    if preview.plan is not None:
        body["plan"] = [{"topic": r.ref.topic, "partition": r.ref.partition, "current": r.current, "target": r.target,
                         "log_start": r.log_start, "log_end": r.log_end, "clamped": r.clamped, "note": r.note}
                        for r in preview.plan.rows]
    return body


def connect_clusters_json(found) -> list[dict]:
    """`connect clusters --format json`: the Connect clusters registered beside a Kafka cluster (secrets by the
    name of their variable only)."""
    return [{"name": c.name, "url": c.url, "username": c.username, "password_env": c.password_env,
             "ca_file": c.ca_file, "cert_file": c.cert_file, "key_file": c.key_file, "description": c.description,
             "operator_plugins": c.operator_plugins, "operator_settings": c.operator_settings,
             "file_dirs": c.file_dirs} for c in found]
