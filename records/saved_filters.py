"""Saved filters: a person's named views of the message browser on a cluster. Personal page state (nothing in
Kafka changes), so no audit event; only the browser's own parameters are kept, re-read through its form, so a
saved filter is exactly a URL the person could have typed."""

from __future__ import annotations

from console.errors import ConsoleError
from records.browse import BrowseQuery
from records.browse_forms import query_string
from records.models import SavedFilter

MAX_PER_CLUSTER = 100
MSG_NAME_NEEDED = "Name the filter (up to 80 characters)."
MSG_TOO_MANY = "You keep {count} saved filters on this cluster, the most there can be: delete one first."
MSG_NOT_FOUND = "You have no saved filter #{id} on this cluster."


def saved_filters(user, cluster: str) -> list[SavedFilter]:
    """The person's saved filters on the cluster, by name."""
    return list(SavedFilter.objects.filter(user=user, cluster=cluster))


def saved_filter_save(*, user, cluster: str, topic: str, name: str, query: BrowseQuery) -> SavedFilter:
    """Keeps the view under the name (a name used before on this cluster now means this view)."""
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise ConsoleError(MSG_NAME_NEEDED, field="name")
    existing = SavedFilter.objects.filter(user=user, cluster=cluster)
    count = existing.count()
    if count >= MAX_PER_CLUSTER and not existing.filter(name=name).exists():
        raise ConsoleError(MSG_TOO_MANY.format(count=count), field="name")
    saved, _ = SavedFilter.objects.update_or_create(user=user, cluster=cluster, name=name,
                                                    defaults={"topic": topic, "query": query_string(query)})
    return saved


def saved_filter_delete(*, user, cluster: str, filter_id: int) -> None:
    deleted, _ = SavedFilter.objects.filter(user=user, cluster=cluster, pk=filter_id).delete()
    if not deleted:
        raise ConsoleError(MSG_NOT_FOUND.format(id=filter_id))
