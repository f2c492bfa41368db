from django.apps import AppConfig


class ReplicationConfig(AppConfig):
    name = "replication"
    verbose_name = "Leaders and replica placement"
