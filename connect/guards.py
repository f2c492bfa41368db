"""The rules a connector's configuration passes before Connect sees it, on create and edit (before Connect's own
validation too: the worker resolves config provider references while validating, and its messages quote values).

For everyone: no connector writes the audit witness topic on the witness's cluster, known by its id as the worker
reports it (a second registration of the same brokers is the same cluster). Below admin: no topic the connector
reads is masked for the person (a connector copies every byte), it makes Kafka create no topic and writes none
that does not exist (the topic policies apply to the topics the console creates), and the configuration passes
the Connect cluster's allowlist (connect/operator_rules.py). A refusal is audited and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from connect.masking import mask_config
from connect.models import ConnectCluster
from connect.operator_rules import OperatorPolicy, RuleBroken, check_operator_config
from connect.topic_flow import TopicFlow, may_write, topic_flow
from console.accounts.roles import Role, user_role
from console.audit.actor import Actor
from console.audit.services import audit_refusal
from console.witness.config import witness_config
from console.witness.guard import MSG_WITNESS_UNKNOWN, witness_on, witness_refused
from console.clusters.models import Cluster
from console.clusters.selectors import cluster_admin
from gateway.kafka_connect import ConnectClient
from gateway.kafka_connect.errors import ConnectError
from console.errors import ConsoleError, PermissionRefused
from gateway.kafka.errors import KafkaGatewayError
from gateway.user_regex import RegexRefused, compile_user_regex
from masking.selectors import masks_any_topic, rules_for

MSG_MASKED_READ = ("Connector '{name}' would read topic '{topic}', of which masking rules hide parts from your role; "
                   "a connector copies every byte, so only admins may have one read it.")
MSG_MASKED_PATTERN = ("Connector '{name}' would read the topics topics.regex matches on cluster '{cluster}', where "
                      "masking rules hide parts of topics from your role: name its topics in 'topics' instead.")
MSG_READS_UNKNOWN = ("Connector '{name}' would read topics of the cluster at {address}, which is not a cluster the "
                     "console knows, so its masking rules cannot apply: only admins may create it.")
MSG_MASKED_ELSEWHERE = ("Connector '{name}' would read topics of cluster '{cluster}', where masking rules hide parts "
                        "of topics from your role: only admins may create it.")
MSG_CREATES = "Connector '{name}': {why}; creating topics is for admins (topic policies apply to every new topic)."
MSG_UNKNOWN_WRITES = ("Connector '{name}': {why}, so the console cannot tell that every topic it writes exists; "
                      "only admins may create it.")
MSG_MISSING_TOPICS = ("Connector '{name}' names {topics}, which cluster '{cluster}' does not have: Kafka or Connect "
                      "would create them past the topic policies. Create them first, or ask an admin.")
MSG_WRITES_ELSEWHERE = "Connector '{name}' would write to another cluster ({address}): only admins may create it."
MSG_WITNESS_CONNECTOR = ("Connector '{name}' may write topic '{topic}', the audit witness on cluster '{cluster}' "
                         "({how}): the console does not let a connector write to it.")
WITNESS_VERB = "let a connector write to"


@dataclass(frozen=True)
class PluginFacts:
    """What the worker says of a plugin: source or sink, every setting it declares, and which are passwords."""

    plugin: str
    type: str
    declared: frozenset[str]
    secrets: frozenset[str]


def plugin_facts(client: ConnectClient, plugin: str) -> PluginFacts:
    """The plugin as the worker knows it; a plugin it does not have is of no type and declares nothing (Connect's
    validation then names the problem)."""
    kind = next((p.type for p in client.plugins() if p.class_name == plugin), "") if plugin else ""
    try:
        definitions = client.plugin_config(plugin) if kind else []
    except ConnectError:
        definitions = []
    return PluginFacts(plugin=plugin, type=kind, declared=frozenset(d.name for d in definitions),
                       secrets=frozenset(d.name for d in definitions if d.secret))


def operator_policy(registration: ConnectCluster) -> OperatorPolicy:
    return OperatorPolicy(connect=registration.name, plugins=frozenset(registration.operator_plugins),
                          settings=tuple(registration.operator_settings), file_dirs=tuple(registration.file_dirs))


def _pattern_matches(pattern: str, topic: str) -> bool:
    try:
        return compile_user_regex(pattern).fullmatch(topic) is not None
    except RegexRefused:
        return True  # a pattern RE2 cannot run may match: fail closed


def _cluster_at(address: str) -> str | None:
    """The registered cluster one of whose bootstrap servers `address` names (host:port, any case)."""
    wanted = {part.strip().lower() for part in address.split(",") if part.strip()}
    for cluster in Cluster.objects.order_by("pk"):
        if wanted & {part.strip().lower() for part in cluster.bootstrap_servers.split(",")}:
            return cluster.name
    return None


def _masked_reads(cluster: str, name: str, flow: TopicFlow, user) -> str:
    for topic in flow.reads:
        if rules_for(cluster, topic, user):
            return MSG_MASKED_READ.format(name=name, topic=topic)
    if flow.reads_pattern and masks_any_topic(cluster, user):
        return MSG_MASKED_PATTERN.format(name=name, cluster=cluster)
    if flow.reads_elsewhere:
        other = _cluster_at(flow.reads_elsewhere)
        if other is None:
            return MSG_READS_UNKNOWN.format(name=name, address=flow.reads_elsewhere)
        if masks_any_topic(other, user):
            return MSG_MASKED_ELSEWHERE.format(name=name, cluster=other)
    return ""


def _new_topics(name: str, flow: TopicFlow) -> str:
    if flow.creates:
        return MSG_CREATES.format(name=name, why=flow.creates[0])
    if flow.writes_elsewhere:
        return MSG_WRITES_ELSEWHERE.format(name=name, address=flow.writes_elsewhere)
    if flow.unknown_writes:
        return MSG_UNKNOWN_WRITES.format(name=name, why=flow.unknown_writes)
    if flow.write_prefixes or flow.write_patterns:
        return MSG_UNKNOWN_WRITES.format(name=name, why="it writes topics named by a prefix or a pattern")
    return ""


def _missing_topics(cluster: str, name: str, flow: TopicFlow) -> str:
    """Topics the connector names that the cluster does not have: written, a producer (or Connect) would create
    them; read, a consumer may have the broker create them (allow.auto.create.topics)."""
    named = list(dict.fromkeys(flow.writes + flow.reads))
    if not named:
        return ""
    try:
        found = cluster_admin(cluster).describe_topics(named, skip_missing=True)
    except KafkaGatewayError as exc:
        raise ConsoleError(exc.message) from None
    missing = [topic for topic in named if topic not in found]
    if not missing:
        return ""
    return MSG_MISSING_TOPICS.format(name=name, cluster=cluster, topics=", ".join(repr(t) for t in missing))


def _below_admin(registration: ConnectCluster, name: str, facts: PluginFacts, config: dict[str, str],
                 changed: frozenset[str], flow: TopicFlow, user) -> str:
    """The first rule below admin the configuration breaks, as its message; "" when it breaks none."""
    cluster = registration.cluster
    problem = _masked_reads(cluster, name, flow, user) or _new_topics(name, flow)
    if problem:
        return problem
    try:
        check_operator_config(operator_policy(registration), plugin=facts.plugin, declared=facts.declared,
                              config=config, changed=changed)
    except RuleBroken as exc:
        return exc.message
    return _missing_topics(cluster, name, flow)


def _witness(*, actor: Actor, action: str, registration: ConnectCluster, client: ConnectClient, name: str,
             flow: TopicFlow, params: dict, reason: str) -> None:
    witness = witness_config()
    if witness is None or not may_write(flow, witness.topic, pattern_matches=_pattern_matches):
        return
    refusal = {"actor": actor, "action": action, "cluster": registration.cluster, "topic": witness.topic,
               "what": WITNESS_VERB, "reason": reason, "params": params}
    cluster_id = "" if flow.writes_elsewhere else client.worker_info().kafka_cluster_id
    unknown = ("the connector writes to another cluster's bootstrap servers" if flow.writes_elsewhere
               else "the worker did not say which Kafka cluster it uses" if not cluster_id else "")
    if not unknown:
        try:
            if witness_on(cluster_id=cluster_id) is None:
                return
        except ConsoleError as exc:
            unknown = exc.message
    if unknown:
        witness_refused(**refusal, message=MSG_WITNESS_UNKNOWN.format(
            topic=witness.topic, cluster=registration.cluster, what=WITNESS_VERB, detail=unknown))
    how = ("it names the topic" if witness.topic in flow.writes
           else flow.unknown_writes or "a prefix or pattern of its settings covers the name")
    witness_refused(**refusal, message=MSG_WITNESS_CONNECTOR.format(name=name, topic=witness.topic,
                                                                    cluster=registration.cluster, how=how))


def connector_guard(*, actor: Actor, action: str, registration: ConnectCluster, client: ConnectClient, name: str,
                    facts: PluginFacts, config: dict[str, str], changed: frozenset[str], target: str,
                    reason: str = "") -> None:
    """Raises PermissionRefused, after an audited refusal, for the first rule the configuration breaks (see the
    module's docstring); returns when it breaks none. `changed`: the settings this person writes."""
    flow = topic_flow(facts.plugin, facts.type, config)
    params = {"connect": registration.name, "connector": name, "config": mask_config(config, facts.secrets)}
    if user_role(actor.user) != Role.ADMIN:
        problem = _below_admin(registration, name, facts, config, changed, flow, actor.user)
        if problem:
            audit_refusal(actor=actor, action=action, cluster=registration.cluster, target=target, reason=reason,
                          params=params, error=problem)
            raise PermissionRefused(problem)
    _witness(actor=actor, action=action, registration=registration, client=client, name=name, flow=flow,
             params=params, reason=reason)
