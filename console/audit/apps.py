from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "console.audit"
    label = "audit"

    def ready(self) -> None:
        from console.audit.metrics import audit_metrics
        from console.metrics.sources import register_metrics

        register_metrics("audit", audit_metrics, order=20)
