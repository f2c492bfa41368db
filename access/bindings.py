"""ACL bindings from what a person asks for: checked the way the broker would, before anything is sent.

Pure: no Kafka, no database."""

from __future__ import annotations

import ipaddress
import json

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
# Kafka 4.3's StandardAuthorizer compares an ACL's host, as text, with the client's address as Java writes it
# (InetAddress.getHostAddress: IPv6 in full, without '::', and an IPv4-mapped one as IPv4); a name or a range would be
# stored and never match anyone. Ranges (KIP-1276) are not in 4.3.1's authorizer.
MSG_HOST = ("An ACL's host is * or one IP address (got {host!r}): the broker compares it with the client's address, "
            "never with a name.")
MSG_HOST_RANGE = ("{host!r} is a range of addresses: Kafka 4.3's authorizer compares an ACL's host with the client's "
                  "address as text, so a range would never match (CIDR ranges, KIP-1276, are not in this broker). "
                  "Give * or one IP address, one binding per address.")
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
    """`*`, or one IP address written as the broker will compare it (IPv6 the way Java writes a client's address)."""
    host = host.strip()
    if host in ("", "*"):
        return "*"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:
            ipaddress.ip_network(host, strict=False)
        except ValueError:
            raise ConsoleError(MSG_HOST.format(host=host)) from None
        raise ConsoleError(MSG_HOST_RANGE.format(host=host)) from None
    if address.version == 4:
        return str(address)
    if address.scope_id:
        raise ConsoleError(MSG_HOST_SCOPED.format(host=host))
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))


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
    found = bindings_for(principal=principal, resource_type=kind, resource_name=name, pattern_type=pattern,
                         operations=[operation], permission=permission, host=host)
    return found[0]


def entry_json(entry: AclEntry) -> dict:
    return {"principal": entry.principal, "resource_type": entry.resource_type, "pattern_type": entry.pattern_type,
            "resource_name": entry.resource_name, "operation": entry.operation, "permission": entry.permission,
            "host": entry.host}


def entry_line(entry: AclEntry) -> str:
    """Kafka's own wording (kafka-acls --list) for one binding."""
    return (f"(principal={entry.principal}, host={entry.host}, operation={entry.operation}, "
            f"permissionType={entry.permission}) on ResourcePattern(resourceType={entry.resource_type}, "
            f"name={entry.resource_name}, patternType={entry.pattern_type})")
