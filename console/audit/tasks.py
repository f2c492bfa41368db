from dataclasses import asdict

from celery import shared_task

from console.audit.actor import Actor
from console.witness.publisher import witness_publish


@shared_task(ignore_result=False)
def publish_witness() -> dict:
    return asdict(witness_publish(actor=Actor.system()))
