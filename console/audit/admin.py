from django.contrib import admin

from console.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: nobody adds, changes or deletes audit events, not even superusers."""

    list_display = ("seq", "created_at", "actor_name", "source", "cluster", "action", "target", "outcome")
    list_filter = ("outcome", "source", "cluster")
    search_fields = ("actor_name", "action", "target", "reason")
    actions = None

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
