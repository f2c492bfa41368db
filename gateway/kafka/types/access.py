"""Who may do what: ACLs, SCRAM credentials and client quotas."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

# Kafka's names for ACL resource types (librdkafka calls the cluster resource BROKER).
ACL_RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID")
ACL_PATTERN_TYPES = ("LITERAL", "PREFIXED")
ACL_OPERATIONS = ("ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
                  "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE")
ACL_PERMISSIONS = ("ALLOW", "DENY")


@dataclass(frozen=True, order=True)
class AclEntry:
    """One ACL binding, exactly as the authorizer stores it."""

    principal: str  # "User:alice"
    resource_type: str  # one of ACL_RESOURCE_TYPES
    pattern_type: str  # LITERAL or PREFIXED
    resource_name: str  # "*" for every resource of the type (LITERAL); "kafka-cluster" for CLUSTER
    operation: str
    permission: str
    host: str = "*"


@dataclass(frozen=True)
class AclQuery:
    """Which bindings to list or delete; None matches any. pattern_type MATCH also finds the wildcard and the
    prefixes that cover `resource_name`."""

    principal: str | None = None
    resource_type: str | None = None
    resource_name: str | None = None
    pattern_type: str | None = None
    operation: str | None = None
    permission: str | None = None
    host: str | None = None


@dataclass(frozen=True)
class ScramCredential:
    mechanism: str  # SCRAM-SHA-256 or SCRAM-SHA-512
    iterations: int


@dataclass(frozen=True)
class ScramUser:
    name: str
    credentials: tuple[ScramCredential, ...]


@dataclass(frozen=True)
class ClientQuota:
    """The quotas set on one entity: user and/or client id, each a name, or None for the default entity."""

    user: str | None
    client_id: str | None
    user_is_default: bool
    client_id_is_default: bool
    values: Mapping[str, float]
