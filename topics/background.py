"""The gateway the shared tables' background rebuilds use: a page's calls keep KAFKA_REQUEST_TIMEOUT_S, a rebuild's
get TOPIC_SNAPSHOT_TIMEOUT_S."""

from __future__ import annotations

from django.conf import settings

from console.clusters import selectors


def background_admin(cluster: str):
    """The cluster's gateway for the shared tables' background rebuilds."""
    return patient_admin(selectors.cluster_admin(cluster))


def patient_admin(admin):
    """The same gateway with a rebuild's longer bound on each call (a page's stays KAFKA_REQUEST_TIMEOUT_S)."""
    return selectors.patient_admin(admin, settings.TOPIC_SNAPSHOT_TIMEOUT_S)
