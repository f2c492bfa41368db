from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "access"
    verbose_name = "ACLs, SCRAM users and client quotas"
