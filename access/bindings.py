"""ACL bindings from what a person asks for: checked the way the broker would, before anything is sent.

Pure: no Kafka, no database."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import replace

from console.errors import ConsoleError
from gateway.kafka.types import (ACL_OPERATIONS, ACL_PATTERN_TYPES, ACL_PERMISSIONS, ACL_RESOURCE_TYPES, AclEntry,
                                 AclQuery)

CLUSTER_RESOURCE = "kafka-cluster"  # the only name the CLUSTER resource type has
MSG_PRINCIPAL = "A principal is written Type:name, e.g. User:alice (got {principal!r})."
MSG_RESOURCE_NAME = "Name the {kind} (or * for every {kind} with a literal pattern)."
MSG_CLUSTER_NAME = "The cluster resource is always named kafka-cluster."
MSG_PREFIX_WILDCARD = "A prefixed pattern cannot be *: use a literal * for every {kind}."
MSG_NO_OPERATIONS = "Choose at least one operation."
MSG_UNKNOWN = "Unknown {what} {value!r}; one of: {choices}."
MSG_BAD_BINDING = "Not an ACL binding: {detail}"

# What each resource type's ACLs can grant (Kafka's AclEntry.supportedOperations); ALL is allowed everywhere.
SUPPORTED_OPERATIONS = {
    "TOPIC": {"READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"},
    "GROUP": {"READ", "DESCRIBE", "DELETE"},
    "CLUSTER": {"CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALTER",
                "DESCRIBE"},
    "TRANSACTIONAL_ID": {"DESCRIBE", "WRITE"},
}
MSG_UNSUPPORTED = "{operation} is not an operation on a {kind} resource; it accepts {choices}."
# StandardAuthorizer compares an ACL's host, as text, with the client's address as Java writes it
# (InetAddress.getHostAddress: IPv6 in full, without '::', and an IPv4-mapped one as IPv4): a name would be stored and
# never match anyone. A range in CIDR notation (KIP-1276) is parsed and matched as a range, but only by brokers of
# Kafka 4.4 on, once the cluster's metadata.version is 4.4-IV1 (level 32); 4.3's authorizer would store it as text
# that no address equals, and the console refuses it there (range_refusal).
MSG_HOST = ("An ACL's host is *, one IP address or a CIDR range such as 10.0.0.0/8 (got {host!r}): the broker compares "
            "it with the client's address, never with a name.")
MSG_HOST_BITS = ("{host!r} has address bits set past its /{prefix} prefix: the range it means is {network}; "
                 "give that.")
MSG_HOST_MAPPED = ("{host!r} is a range of IPv4-mapped IPv6 addresses: the broker sees such a client's address as "
                   "IPv4, so give the IPv4 range.")
MSG_HOST_RANGE = ("{host!r} is a range of addresses (CIDR, KIP-1276): cluster '{cluster}' runs metadata.version "
                  "{version}, whose authorizer compares an ACL's host with the client's address as text, so the range "
                  "would be stored and never match anyone. Ranges need metadata.version 4.4-IV1 (Kafka 4.4) or "
                  "later; until then give * or one IP address, one binding per address.")
RANGES_LEVEL = 32  # metadata.version 4.4-IV1
# metadata.version's names by feature level, read from Kafka 4.4.0's MetadataVersion (4.5-IV0 is not production).
METADATA_VERSIONS = {21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0",
                     27: "4.1-IV1", 28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1",
                     33: "4.4-IV2"}
MSG_HOST_SCOPED = "{host!r} has a zone (after %): give the address without it."


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    upper = value.strip().upper().replace("-", "_")
    if upper not in choices:
        raise ConsoleError(MSG_UNKNOWN.format(what=what, value=value, choices=", ".join(choices)))
    return upper


def principal_checked(principal: str) -> str:
    kind, sep, name = principal.partition(":")
    if not sep or not kind.strip() or not name or kind != kind.strip():
        raise ConsoleError(MSG_PRINCIPAL.format(principal=principal))
    return principal


def host_checked(host: str) -> str:
    """`*`, one IP address written as the broker will compare it (IPv6 the way Java writes a client's address), or
    a CIDR range in its shortest form (the broker parses a range; whether the cluster can is range_refusal's
    question, as it depends on the cluster)."""
    host = host.strip()
    if host in ("", "*"):
        return "*"
    if "/" in host:
        return _range_checked(host)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ConsoleError(MSG_HOST.format(host=host), field="host") from None
    if address.version == 4:
        return str(address)
    if address.scope_id:
        raise ConsoleError(MSG_HOST_SCOPED.format(host=host), field="host")
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))


def _range_checked(host: str) -> str:
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise ConsoleError(MSG_HOST.format(host=host), field="host") from None
    if "%" in host:
        raise ConsoleError(MSG_HOST_SCOPED.format(host=host), field="host")
    if network.version == 6 and network.network_address.ipv4_mapped is not None:
        raise ConsoleError(MSG_HOST_MAPPED.format(host=host), field="host")
    if ipaddress.ip_interface(host).ip != network.network_address:
        raise ConsoleError(MSG_HOST_BITS.format(host=host, prefix=network.prefixlen, network=network), field="host")
    return str(network)


def metadata_version_name(level: int | None) -> str:
    if level is None:
        return "unknown (the cluster reports none)"
    return f"{METADATA_VERSIONS[level]} (level {level})" if level in METADATA_VERSIONS else f"level {level}"


def range_refusal(host: str, *, cluster: str, metadata_level: int | None) -> str:
    """Why `host`, a range, cannot go to a cluster at this metadata.version level ("" when it can)."""
    if "/" not in host or (metadata_level is not None and metadata_level >= RANGES_LEVEL):
        return ""
    return MSG_HOST_RANGE.format(host=host, cluster=cluster, version=metadata_version_name(metadata_level))


def bindings_for(*, principal: str, resource_type: str, resource_name: str, pattern_type: str,
                 operations: list[str], permission: str, host: str = "*") -> list[AclEntry]:
    """One binding per operation, or a ConsoleError that names the first problem."""
    principal = principal_checked(principal)
    kind = _choice(resource_type, ACL_RESOURCE_TYPES, "resource type")
    pattern = _choice(pattern_type, ACL_PATTERN_TYPES, "pattern type")
    permission = _choice(permission, ACL_PERMISSIONS, "permission")
    if kind == "CLUSTER":
        if resource_name not in ("", CLUSTER_RESOURCE) or pattern != "LITERAL":
            raise ConsoleError(MSG_CLUSTER_NAME)
        resource_name = CLUSTER_RESOURCE
    elif not resource_name:
        raise ConsoleError(MSG_RESOURCE_NAME.format(kind=kind.lower().replace("_", " ")))
    elif resource_name == "*" and pattern == "PREFIXED":
        raise ConsoleError(MSG_PREFIX_WILDCARD.format(kind=kind.lower().replace("_", " ")))
    chosen = [_choice(op, ACL_OPERATIONS, "operation") for op in operations]
    if not chosen:
        raise ConsoleError(MSG_NO_OPERATIONS)
    for operation in chosen:
        if operation != "ALL" and operation not in SUPPORTED_OPERATIONS[kind]:
            raise ConsoleError(MSG_UNSUPPORTED.format(operation=operation, kind=kind,
                                                      choices=", ".join(sorted(SUPPORTED_OPERATIONS[kind]))))
    host = host_checked(host)
    return sorted({AclEntry(principal=principal, resource_type=kind, pattern_type=pattern,
                            resource_name=resource_name, operation=op, permission=permission, host=host)
                   for op in chosen})


def query_for(*, principal: str = "", resource_type: str = "", resource_name: str = "", pattern_type: str = "",
              operation: str = "", permission: str = "", host: str = "") -> AclQuery:
    """A filter from optional fields; blank matches anything. A resource name with no pattern type finds every
    binding that applies to it (MATCH: the literal name, the wildcard and the prefixes covering it)."""
    kind = _choice(resource_type, ACL_RESOURCE_TYPES, "resource type") if resource_type else None
    pattern = (_choice(pattern_type, ("ANY", "MATCH", *ACL_PATTERN_TYPES), "pattern type") if pattern_type
               else ("MATCH" if resource_name else None))
    if pattern == "ANY":
        pattern = None
    if kind == "CLUSTER" and resource_name == "":
        resource_name = CLUSTER_RESOURCE
    return AclQuery(
        principal=principal_checked(principal) if principal else None, resource_type=kind,
        resource_name=resource_name or None, pattern_type=pattern,
        operation=_choice(operation, ACL_OPERATIONS, "operation") if operation else None,
        permission=_choice(permission, ACL_PERMISSIONS, "permission") if permission else None,
        host=host or None)


def binding_token(entry: AclEntry) -> str:
    """A binding as one form value (a checkbox), read back by binding_from_token."""
    return json.dumps([entry.principal, entry.resource_type, entry.pattern_type, entry.resource_name,
                       entry.operation, entry.permission, entry.host], ensure_ascii=False)


def binding_from_token(token: str) -> AclEntry:
    try:
        principal, kind, pattern, name, operation, permission, host = json.loads(token)
    except (ValueError, TypeError) as exc:
        raise ConsoleError(MSG_BAD_BINDING.format(detail=exc)) from exc
    if not all(isinstance(v, str) for v in (principal, kind, pattern, name, operation, permission, host)):
        raise ConsoleError(MSG_BAD_BINDING.format(detail="every field is text"))
    return stored_binding(principal=principal, resource_type=kind, resource_name=name, pattern_type=pattern,
                          operation=operation, permission=permission, host=host)


def stored_binding(*, principal: str, resource_type: str, resource_name: str, pattern_type: str, operation: str,
                   permission: str, host: str) -> AclEntry:
    """A binding the authorizer holds, named to delete it: checked like a new one, but its host kept as stored, as
    a delete matches hosts as text (one another tool wrote as ::1 or 10.0.0.1/8 is found only so)."""
    if not host:
        raise ConsoleError(MSG_BAD_BINDING.format(detail="no host"))
    [entry] = bindings_for(principal=principal, resource_type=resource_type, resource_name=resource_name,
                           pattern_type=pattern_type, operations=[operation], permission=permission)
    return replace(entry, host=host)


def entry_json(entry: AclEntry) -> dict:
    return {"principal": entry.principal, "resource_type": entry.resource_type, "pattern_type": entry.pattern_type,
            "resource_name": entry.resource_name, "operation": entry.operation, "permission": entry.permission,
            "host": entry.host}


def entry_line(entry: AclEntry) -> str:
    """Kafka's own wording (kafka-acls --list) for one binding."""
    return (f"(principal={entry.principal}, host={entry.host}, operation={entry.operation}, "
            f"permissionType={entry.permission}) on ResourcePattern(resourceType={entry.resource_type}, "
            f"name={entry.resource_name}, patternType={entry.pattern_type})")
