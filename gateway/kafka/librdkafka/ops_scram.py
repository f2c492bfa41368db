"""DescribeUserScramCredentials and AlterUserScramCredentials. Passwords go to the broker and nowhere else."""

from __future__ import annotations

from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
                                   UserScramCredentialUpsertion)

from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.types import SCRAM_MECHANISMS, ScramCredential, ScramUser


def _mechanism(name: str) -> ScramMechanism:
    return ScramMechanism[name.replace("-", "_")]


def _mechanism_name(mechanism: ScramMechanism) -> str:
    return mechanism.name.replace("_", "-")


class ScramOps(AdminBase):
    def describe_scram_users(self) -> list[ScramUser]:
        """Every user with a SCRAM credential, and each credential's mechanism and iterations (never a secret)."""

        def run(admin: AdminClient) -> list[ScramUser]:
            described = self._wait(admin.describe_user_scram_credentials(request_timeout=self.timeout))
            # Credentials in the broker's order, which Kafka's tool prints as it comes.
            return sorted((ScramUser(name=user, credentials=tuple(
                ScramCredential(_mechanism_name(c.mechanism), int(c.iterations)) for c in d.scram_credential_infos))
                for user, d in described.items()), key=lambda u: u.name)

        return self._call(run)

    def upsert_scram_credential(self, user: str, *, mechanism: str, iterations: int, password: str) -> None:
        """Creates or replaces one credential; the broker salts and hashes the password."""

        def run(admin: AdminClient) -> None:
            change = UserScramCredentialUpsertion(user, ScramCredentialInfo(_mechanism(mechanism), iterations),
                                                  password.encode())
            self._wait_all(admin.alter_user_scram_credentials([change], request_timeout=self.timeout))

        self._call(run)

    def delete_scram_credential(self, user: str, *, mechanism: str) -> None:
        def run(admin: AdminClient) -> None:
            change = UserScramCredentialDeletion(user, _mechanism(mechanism))
            self._wait_all(admin.alter_user_scram_credentials([change], request_timeout=self.timeout))

        self._call(run)
