"""Transactions and producers (`manage.py transactions`, as kafka-transactions shows them)."""

from __future__ import annotations

from ninja import Query, Router, Schema
from pydantic import Field

from api.access import allow
from api.schemas import PROBLEMS
from transactions import selectors
from transactions.serializers import hanging_json, producers_json, transaction_json, transactions_json

router = Router(tags=["transactions"])


@router.get("/clusters/{cluster}/transactions", response={200: list[dict], **PROBLEMS},
            summary="List transactional ids")
def transaction_list(request, cluster: str):
    """`manage.py transactions list --format json`."""
    allow(request, cluster=cluster)
    return transactions_json(selectors.transactions_list(cluster))


class HangingQuery(Schema):
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None
    max_transaction_timeout: int = Field(selectors.DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN, ge=1,
                                         description="minutes")


@router.get("/clusters/{cluster}/transactions/hanging", response={200: list[dict], **PROBLEMS},
            summary="Find hanging transactions")
def transaction_hanging(request, cluster: str, query: Query[HangingQuery]):
    """`manage.py transactions find-hanging --format json`: open transactions no coordinator will end."""
    allow(request, cluster=cluster)
    at = selectors.now_ms()
    return hanging_json(selectors.find_hanging(cluster, topic=query.topic, partition=query.partition,
                                               broker=query.broker_id,
                                               max_timeout_minutes=query.max_transaction_timeout, at_ms=at), at_ms=at)


@router.get("/clusters/{cluster}/transactions/{kafka_name:transactional_id}", response={200: list[dict], **PROBLEMS},
            summary="Describe a transactional id")
def transaction_describe(request, cluster: str, transactional_id: str):
    """`manage.py transactions describe --format json`."""
    allow(request, cluster=cluster)
    info = selectors.transaction_describe(cluster, transactional_id)
    return transaction_json(info, now_ms=selectors.now_ms())


class ProducersQuery(Schema):
    partition: int | None = Field(None, description="default: every partition of the topic")
    broker_id: int | None = Field(None, description="ask this replica instead of the leader")


@router.get("/clusters/{cluster}/topics/{topic}/producers", response={200: list[dict], **PROBLEMS},
            summary="A topic's active producers")
def producer_list(request, cluster: str, topic: str, query: Query[ProducersQuery]):
    """`manage.py transactions describe-producers --format json`."""
    allow(request, cluster=cluster)
    return producers_json(selectors.producers_describe(cluster, topic, query.partition, broker=query.broker_id))
