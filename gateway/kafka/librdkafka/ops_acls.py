"""DescribeAcls, CreateAcls and DeleteAcls."""

from __future__ import annotations

from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)

from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.types import AclEntry, AclQuery

_RESOURCE = {"TOPIC": ResourceType.TOPIC, "GROUP": ResourceType.GROUP, "CLUSTER": ResourceType.BROKER,
             "TRANSACTIONAL_ID": ResourceType.TRANSACTIONAL_ID}
_RESOURCE_NAMES = {value: name for name, value in _RESOURCE.items()}


def _entry(binding: AclBinding) -> AclEntry:
    return AclEntry(principal=binding.principal, resource_type=_RESOURCE_NAMES.get(binding.restype, binding.restype.name),
                    pattern_type=binding.resource_pattern_type.name, resource_name=binding.name,
                    operation=binding.operation.name, permission=binding.permission_type.name, host=binding.host)


def _binding(entry: AclEntry) -> AclBinding:
    return AclBinding(_RESOURCE[entry.resource_type], entry.resource_name,
                      ResourcePatternType[entry.pattern_type], entry.principal, entry.host,
                      AclOperation[entry.operation], AclPermissionType[entry.permission])


def _exact_filter(entry: AclEntry) -> AclBindingFilter:
    return AclBindingFilter(_RESOURCE[entry.resource_type], entry.resource_name,
                            ResourcePatternType[entry.pattern_type], entry.principal, entry.host,
                            AclOperation[entry.operation], AclPermissionType[entry.permission])


def _query_filter(query: AclQuery) -> AclBindingFilter:
    return AclBindingFilter(
        _RESOURCE[query.resource_type] if query.resource_type else ResourceType.ANY, query.resource_name,
        ResourcePatternType[query.pattern_type] if query.pattern_type else ResourcePatternType.ANY,
        query.principal, query.host,
        AclOperation[query.operation] if query.operation else AclOperation.ANY,
        AclPermissionType[query.permission] if query.permission else AclPermissionType.ANY)


class AclOps(AdminBase):
    def describe_acls(self, query: AclQuery = AclQuery()) -> list[AclEntry]:
        """The bindings matching `query`, sorted; an authorizer-less cluster raises (SECURITY_DISABLED)."""

        def run(admin: AdminClient) -> list[AclEntry]:
            found = self._wait(admin.describe_acls(_query_filter(query), request_timeout=self.timeout))
            return sorted(_entry(b) for b in found)

        return self._call(run)

    def create_acls(self, entries: list[AclEntry]) -> None:
        """CreateAcls for every binding in one request; any refusal raises (the broker creates the others)."""

        def run(admin: AdminClient) -> None:
            if entries:
                self._wait_all(admin.create_acls([_binding(e) for e in entries], request_timeout=self.timeout))

        self._call(run)

    def delete_acls(self, entries: list[AclEntry]) -> list[AclEntry]:
        """DeleteAcls with one exact filter per binding (never a wildcard filter); returns what was deleted."""

        def run(admin: AdminClient) -> list[AclEntry]:
            if not entries:
                return []
            results = self._wait_all(admin.delete_acls([_exact_filter(e) for e in entries],
                                                       request_timeout=self.timeout))
            return sorted({_entry(b) for deleted in results.values() for b in deleted})

        return self._call(run)
