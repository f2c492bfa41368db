"""The configuration file: a cluster's desired state as YAML, read strictly (every key allowlisted, every value
typed; a problem names its place in the file) and written in a stable order, so that a file exported, committed
and exported again differs only where the cluster did. Pure: no Django, no Kafka.

    kind: kafka-console/cluster-config
    version: 1
    cluster: prod                        # optional; when given, plan and apply refuse another cluster
    topics:                              # each section is optional: a section left out is not managed
      orders: {partitions: 6, replication_factor: 3, configs: {retention.ms: "604800000"}}
    acls:
      - {principal: "User:billing", resource_type: TOPIC, resource_name: orders, pattern_type: LITERAL,
         operation: READ, permission: ALLOW, host: "*"}
    quotas:
      - {user: billing, values: {producer_byte_rate: 1048576.0}}      # or client_id; "<default>" for the default
    scram_users:
      billing: {mechanisms: [SCRAM-SHA-512], password_env: CONSOLE_SECRET_BILLING}  # the password only to create
    topic_policies:
      naming: {name_pattern: "[a-z.]+", config_rules: ["min.insync.replicas >= 2"]}
    masking_rules:
      - {topic_pattern: "orders.*", selector: json_path, target: "$.card", action: redact, roles: [viewer]}
    connectors:
      local:                             # the Connect cluster's registered name
        orders-sink: {connector.class: ..., topics: orders, db.password: "${file:/secrets/db.properties:pw}"}

Secrets never appear: SCRAM users carry no password (only the name of a variable to create one from), and a
connector's secret is written as the config provider reference it is, or as ******** (keep what the worker has).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace

import yaml

KIND = "kafka-console/cluster-config"
VERSION = 1
DEFAULT = "<default>"  # a quota's default user or client id
SECTIONS = ("topics", "acls", "quotas", "scram_users", "topic_policies", "masking_rules", "connectors")
TOP_KEYS = frozenset({"kind", "version", "cluster", *SECTIONS})
ACL_FIELDS = ("principal", "resource_type", "resource_name", "pattern_type", "operation", "permission", "host")
QUOTA_KEYS = frozenset({"user", "client_id", "values"})
POLICY_FIELDS = ("applies_to", "name_pattern", "name_message", "min_partitions", "max_partitions",
                 "partitions_message", "min_replication_factor", "max_replication_factor", "replication_message")
POLICY_INTS = frozenset({"min_partitions", "max_partitions", "min_replication_factor", "max_replication_factor"})
MASK_FIELDS = ("topic_pattern", "selector", "target", "action", "replacement", "keep_last", "roles")
MAX_BYTES = 5 * 1024 * 1024

MSG_NOT_YAML = "The file is not YAML: {detail}"
MSG_TOO_BIG = "The file is larger than 5 MiB."
MSG_NOT_A_MAPPING = "{where} must be a mapping (key: value)."
MSG_NOT_A_LIST = "{where} must be a list."
MSG_UNKNOWN_KEYS = "{where} has keys the file format does not know: {keys} (known: {known})."
MSG_KIND = f"The file's kind must be '{KIND}' (version {VERSION})."
MSG_VERSION = f"This console reads version {VERSION} of the file format, not '{{version}}'."
MSG_INT = "{where} must be a whole number of at least {least}."
MSG_TEXT = "{where} must be text."
MSG_NUMBER = "{where} must be a number."
MSG_REQUIRED = "{where} is required."
MSG_TWICE = "{where} is given twice."
MSG_NAME = "{where} must be a non-empty name."


class DocumentError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class TopicSpec:
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class QuotaSpec:
    user: str | None  # DEFAULT for the default user
    client_id: str | None
    values: dict[str, float]

    @property
    def key(self) -> str:
        parts = []
        if self.user is not None:
            parts.append(f"user={self.user}")
        if self.client_id is not None:
            parts.append(f"client_id={self.client_id}")
        return ",".join(parts)


@dataclass(frozen=True)
class ScramSpec:
    mechanisms: tuple[str, ...]
    password_env: str = ""  # the variable holding the password, to create the credential; never exported


@dataclass(frozen=True)
class MaskSpec:
    topic_pattern: str
    selector: str
    target: str
    action: str
    replacement: str
    keep_last: int
    roles: tuple[str, ...]
    id: int | None = field(default=None, compare=False)  # the rule's row on the cluster (not in the file)

    def as_dict(self) -> dict:
        return {"topic_pattern": self.topic_pattern, "selector": self.selector, "target": self.target,
                "action": self.action, "replacement": self.replacement, "keep_last": self.keep_last,
                "roles": list(self.roles)}


@dataclass(frozen=True)
class ClusterConfig:
    """A cluster's configuration; a section that is None is not in the file, so not managed."""

    cluster: str | None = None
    topics: dict[str, TopicSpec] | None = None
    acls: frozenset[tuple[str, ...]] | None = None  # ACL_FIELDS order
    quotas: dict[str, QuotaSpec] | None = None  # by QuotaSpec.key
    scram_users: dict[str, ScramSpec] | None = None
    topic_policies: dict[str, dict] | None = None  # name -> POLICY_FIELDS and config_rules (texts)
    masking_rules: tuple[MaskSpec, ...] | None = None
    connectors: dict[str, dict[str, dict[str, str]]] | None = None  # connect -> connector -> config

    @property
    def sections(self) -> tuple[str, ...]:
        return tuple(name for name in SECTIONS if getattr(self, name) is not None)

    def only(self, sections: tuple[str, ...]) -> ClusterConfig:
        return replace(self, **{name: None for name in SECTIONS if name not in sections})


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---- reading ------------------------------------------------------------------------------------------------------


def _mapping(value, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DocumentError(MSG_NOT_A_MAPPING.format(where=where))
    return value


def _list(value, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DocumentError(MSG_NOT_A_LIST.format(where=where))
    return value


def _keys(value: dict, where: str, known, required=()) -> None:
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        raise DocumentError(MSG_UNKNOWN_KEYS.format(where=where, keys=", ".join(unknown),
                                                    known=", ".join(sorted(known))))
    for key in required:
        if key not in value:
            raise DocumentError(MSG_REQUIRED.format(where=f"{where}.{key}"))


def _int(value, where: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise DocumentError(MSG_INT.format(where=where, least=least))
    return value


def _text(value, where: str, *, empty: bool = True) -> str:
    # YAML reads 86400000 as a number and true as a boolean: a config value is kept as the text Kafka holds.
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise DocumentError(MSG_TEXT.format(where=where))
    if not empty and not value.strip():
        raise DocumentError(MSG_NAME.format(where=where))
    return value


def _number(value, where: str) -> float:
    if isinstance(value, str):  # YAML 1.1 reads 2.5e6 (no sign in the exponent) as text
        try:
            value = float(value)
        except ValueError:
            raise DocumentError(MSG_NUMBER.format(where=where)) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DocumentError(MSG_NUMBER.format(where=where))
    return float(value)


def _name(key, where: str) -> str:
    if not isinstance(key, str | int) or isinstance(key, bool) or not str(key).strip():
        raise DocumentError(MSG_NAME.format(where=where))
    return str(key)


def _topics(raw) -> dict[str, TopicSpec]:
    topics = {}
    for name, spec in _mapping(raw, "topics").items():
        name = _name(name, "a topic's name")
        where = f"topics.{name}"
        spec = _mapping(spec, where)
        _keys(spec, where, {"partitions", "replication_factor", "configs"}, required=("partitions",))
        configs = {_name(k, f"{where}.configs"): _text(v, f"{where}.configs.{k}")
                   for k, v in _mapping(spec.get("configs"), f"{where}.configs").items()}
        topics[name] = TopicSpec(partitions=_int(spec["partitions"], f"{where}.partitions", 1),
                                 replication_factor=_int(spec.get("replication_factor", 1),
                                                         f"{where}.replication_factor", 1),
                                 configs=configs)
    return topics


def _acls(raw) -> frozenset[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for index, entry in enumerate(_list(raw, "acls")):
        where = f"acls[{index}]"
        entry = _mapping(entry, where)
        _keys(entry, where, set(ACL_FIELDS), required=("principal", "resource_type", "operation"))
        defaults = {"resource_name": "", "pattern_type": "LITERAL", "permission": "ALLOW", "host": "*"}
        binding = tuple(_text(entry.get(key, defaults.get(key)), f"{where}.{key}") for key in ACL_FIELDS)
        if binding in found:
            raise DocumentError(MSG_TWICE.format(where=where))
        found.add(binding)
    return frozenset(found)


def _entity(value, where: str) -> str | None:
    if value is None:
        return None
    return _text(value, where, empty=False)


def _quotas(raw) -> dict[str, QuotaSpec]:
    quotas = {}
    for index, entry in enumerate(_list(raw, "quotas")):
        where = f"quotas[{index}]"
        entry = _mapping(entry, where)
        _keys(entry, where, QUOTA_KEYS, required=("values",))
        spec = QuotaSpec(user=_entity(entry.get("user"), f"{where}.user"),
                         client_id=_entity(entry.get("client_id"), f"{where}.client_id"),
                         values={_name(k, f"{where}.values"): _number(v, f"{where}.values.{k}")
                                 for k, v in _mapping(entry["values"], f"{where}.values").items()})
        if spec.user is None and spec.client_id is None:
            raise DocumentError(MSG_REQUIRED.format(where=f"{where}.user or {where}.client_id"))
        if spec.key in quotas:
            raise DocumentError(MSG_TWICE.format(where=where))
        quotas[spec.key] = spec
    return quotas


def _scram(raw) -> dict[str, ScramSpec]:
    users = {}
    for name, spec in _mapping(raw, "scram_users").items():
        name = _name(name, "a SCRAM user's name")
        where = f"scram_users.{name}"
        spec = _mapping(spec, where)
        _keys(spec, where, {"mechanisms", "password_env"}, required=("mechanisms",))
        mechanisms = tuple(sorted({_text(m, f"{where}.mechanisms", empty=False)
                                   for m in _list(spec["mechanisms"], f"{where}.mechanisms")}))
        users[name] = ScramSpec(mechanisms=mechanisms,
                                password_env=_text(spec.get("password_env", ""), f"{where}.password_env"))
    return users


def _policies(raw) -> dict[str, dict]:
    policies = {}
    for name, spec in _mapping(raw, "topic_policies").items():
        name = _name(name, "a topic policy's name")
        where = f"topic_policies.{name}"
        spec = _mapping(spec, where)
        _keys(spec, where, {*POLICY_FIELDS, "config_rules"})
        values = {}
        for key in POLICY_FIELDS:
            value = spec.get(key)
            if key in POLICY_INTS:
                values[key] = None if value is None else _int(value, f"{where}.{key}", 0)
            else:
                values[key] = "" if value is None else _text(value, f"{where}.{key}")
        values["config_rules"] = [_text(r, f"{where}.config_rules", empty=False)
                                  for r in _list(spec.get("config_rules"), f"{where}.config_rules")]
        policies[name] = values
    return policies


def _masking(raw) -> tuple[MaskSpec, ...]:
    rules = []
    for index, entry in enumerate(_list(raw, "masking_rules")):
        where = f"masking_rules[{index}]"
        entry = _mapping(entry, where)
        _keys(entry, where, set(MASK_FIELDS), required=("topic_pattern", "selector", "action"))
        rule = MaskSpec(topic_pattern=_text(entry["topic_pattern"], f"{where}.topic_pattern", empty=False),
                        selector=_text(entry["selector"], f"{where}.selector", empty=False),
                        target=_text(entry.get("target", ""), f"{where}.target"),
                        action=_text(entry["action"], f"{where}.action", empty=False),
                        replacement=_text(entry.get("replacement", ""), f"{where}.replacement"),
                        keep_last=_int(entry.get("keep_last", 4), f"{where}.keep_last", 0),
                        roles=tuple(sorted(_text(r, f"{where}.roles", empty=False)
                                           for r in _list(entry.get("roles", ["viewer", "operator"]),
                                                          f"{where}.roles"))))
        if rule in rules:
            raise DocumentError(MSG_TWICE.format(where=where))
        rules.append(rule)
    return tuple(rules)


def _connectors(raw) -> dict[str, dict[str, dict[str, str]]]:
    found = {}
    for connect, connectors in _mapping(raw, "connectors").items():
        connect = _name(connect, "a Connect cluster's name")
        found[connect] = {}
        for name, config in _mapping(connectors, f"connectors.{connect}").items():
            name = _name(name, f"a connector's name in connectors.{connect}")
            where = f"connectors.{connect}.{name}"
            found[connect][name] = {_name(k, where): _text(v, f"{where}.{k}")
                                    for k, v in _mapping(config, where).items()}
    return found


READERS = {"topics": _topics, "acls": _acls, "quotas": _quotas, "scram_users": _scram,
           "topic_policies": _policies, "masking_rules": _masking, "connectors": _connectors}


def parse_document(text: str) -> ClusterConfig:
    if len(text.encode()) > MAX_BYTES:
        raise DocumentError(MSG_TOO_BIG)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DocumentError(MSG_NOT_YAML.format(detail=str(exc).splitlines()[0])) from exc
    raw = _mapping(raw, "The file")
    _keys(raw, "The file", TOP_KEYS, required=("kind", "version"))
    if raw["kind"] != KIND:
        raise DocumentError(MSG_KIND)
    if raw["version"] != VERSION:
        raise DocumentError(MSG_VERSION.format(version=raw["version"]))
    cluster = raw.get("cluster")
    sections = {name: READERS[name](raw[name]) for name in SECTIONS if name in raw}
    return ClusterConfig(cluster=None if cluster is None else _text(cluster, "cluster", empty=False), **sections)


# ---- writing ------------------------------------------------------------------------------------------------------


def _quota_yaml(q: QuotaSpec) -> dict:
    entry: dict = {}
    if q.user is not None:
        entry["user"] = q.user
    if q.client_id is not None:
        entry["client_id"] = q.client_id
    entry["values"] = dict(sorted(q.values.items()))
    return entry


def document_data(config: ClusterConfig) -> dict:
    data: dict = {"kind": KIND, "version": VERSION}
    if config.cluster is not None:
        data["cluster"] = config.cluster
    if config.topics is not None:
        data["topics"] = {name: {"partitions": t.partitions, "replication_factor": t.replication_factor,
                                 "configs": dict(sorted(t.configs.items()))}
                          for name, t in sorted(config.topics.items())}
    if config.acls is not None:
        data["acls"] = [dict(zip(ACL_FIELDS, binding, strict=True)) for binding in sorted(config.acls)]
    if config.quotas is not None:
        data["quotas"] = [_quota_yaml(q) for _, q in sorted(config.quotas.items())]
    if config.scram_users is not None:
        data["scram_users"] = {name: {"mechanisms": list(u.mechanisms)}
                               for name, u in sorted(config.scram_users.items())}
    if config.topic_policies is not None:
        data["topic_policies"] = {name: {k: v for k, v in values.items() if v not in ("", None, [])}
                                  for name, values in sorted(config.topic_policies.items())}
    if config.masking_rules is not None:
        data["masking_rules"] = [r.as_dict() for r in sorted(config.masking_rules, key=lambda r: tuple(
            str(v) for v in r.as_dict().values()))]
    if config.connectors is not None:
        data["connectors"] = {connect: {name: dict(sorted(conf.items())) for name, conf in sorted(found.items())}
                              for connect, found in sorted(config.connectors.items())}
    return data


HEADER = ("# A Kafka console cluster configuration (config as code). `manage.py config plan FILE` shows what applying\n"
          "# it would change; `manage.py config apply FILE --if-unchanged FINGERPRINT` applies exactly that plan.\n"
          "# Secrets are not here: SCRAM users have no password (password_env: VAR creates one), connector secrets\n"
          "# are config provider references or ******** (keep what the worker has).\n")


def dump_document(config: ClusterConfig) -> str:
    return HEADER + yaml.safe_dump(document_data(config), sort_keys=False, allow_unicode=True, width=120)
