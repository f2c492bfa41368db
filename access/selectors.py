"""Reads: ACL bindings, SCRAM users and client quotas of one cluster."""

from __future__ import annotations

from console.clusters.selectors import cluster_admin
from console.errors import ConsoleError
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import AclEntry, AclQuery, ClientQuota, ScramUser

MSG_NO_AUTHORIZER = ("Cluster '{cluster}' has no authorizer (its brokers do not set authorizer.class.name), so it "
                     "keeps no ACLs: everyone may do everything.")


class NoAuthorizer(ConsoleError):
    status = 409


def acls_list(cluster: str, query: AclQuery = AclQuery()) -> list[AclEntry]:
    try:
        return cluster_admin(cluster).describe_acls(query)
    except KafkaGatewayError as exc:
        if exc.code == "SECURITY_DISABLED":
            raise NoAuthorizer(MSG_NO_AUTHORIZER.format(cluster=cluster)) from exc
        raise


def scram_users_list(cluster: str) -> list[ScramUser]:
    return cluster_admin(cluster).describe_scram_users()


def scram_user_get(cluster: str, user: str) -> ScramUser | None:
    return next((u for u in scram_users_list(cluster) if u.name == user), None)


def client_quotas_list(cluster: str) -> list[ClientQuota]:
    return cluster_admin(cluster).describe_client_quotas()
