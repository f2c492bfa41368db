"""Scraping /metrics as Prometheus would, and reading the answer back with prometheus_client's own parser."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.offsets.conftest import seeded  # noqa: F401  (a group with commits, for the real sweep)

TOKEN = "4f1c0a7e-scrape-token"


class Scrape:
    """The parsed answer: families by name, and sample values by sample name and labels."""

    def __init__(self, text: str) -> None:
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples: dict[str, dict[frozenset, float]] = {}
        for family in self.families.values():
            for sample in family.samples:
                self.samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value

    def value(self, name: str, **labels: str) -> float | None:
        return self.samples.get(name, {}).get(frozenset(labels.items()))

    def series(self, name: str, **labels: str) -> dict[frozenset, float]:
        """Every sample of `name` whose labels include `labels`."""
        wanted = set(labels.items())
        return {k: v for k, v in self.samples.get(name, {}).items() if wanted <= k}


@pytest.fixture
def scrape(client, settings):
    settings.METRICS_TOKEN = TOKEN

    def get(query: str = "") -> Scrape:
        response = client.get("/metrics" + query, headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200, response.content[:500]
        return Scrape(response.content.decode())

    return get
