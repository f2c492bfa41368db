"""The Server-Timing header: the pure header and parser, then real requests (database alone, then a Kafka page)."""

from types import SimpleNamespace

import pytest

from console.timing import header, parse, timed


def test_the_header_lists_each_phase_that_ran_with_its_count_and_the_whole_request_last():
    value = header({"db": [0.0042, 3], "kafka": [0.0125, 1]}, 0.05)

    assert value == 'kafka;dur=12.5;desc="1 call", db;dur=4.2;desc="3 queries", app;dur=50.0'
    assert parse(value) == {"kafka": 12.5, "db": 4.2, "app": 50.0}


def test_the_threads_cpu_time_and_runqueue_wait_come_after_the_whole_request():
    assert header({}, 0.3, 0.12, 0.05) == "app;dur=300.0, cpu;dur=120.0, runqueue;dur=50.0"


def test_a_phase_that_ran_once_is_counted_in_the_singular():
    assert header({"decode": [0.1, 1]}, 0.2) == 'decode;dur=100.0;desc="1 decoding", app;dur=200.0'


def test_timed_outside_a_request_counts_nothing_and_still_runs_the_block():
    ran = []
    with timed("kafka"):
        ran.append(1)
    assert ran == [1]


@pytest.mark.django_db
def test_a_page_that_only_reads_the_database_says_how_long_its_queries_took(client_for, viewer):
    response = client_for(viewer).get("/clusters/")

    phases = parse(response["Server-Timing"])
    assert response.status_code == 200
    assert phases["db"] > 0 and "kafka" not in phases
    assert phases["app"] >= phases["db"] and 0 < phases["cpu"] <= phases["app"] * 1.05
    assert 0 <= phases["runqueue"] <= phases["app"]  # Linux keeps it per thread


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_topic_page_counts_its_kafka_calls_apart_from_its_queries(local_cluster, client_for, viewer,
                                                                     topic_factory):
    name = topic_factory("timed", partitions=1)

    response = client_for(viewer).get(f"/clusters/local/topics/{name}/")

    assert response.status_code == 200
    phases = parse(response["Server-Timing"])
    assert phases["kafka"] > 0 and phases["db"] > 0
    # Its configs are asked on a thread of their own beside the describe: the calls may overlap, not the queries.
    assert phases["app"] >= phases["db"]


def test_a_call_handed_to_another_thread_counts_for_the_request_that_handed_it_over(rf):
    from concurrent.futures import ThreadPoolExecutor

    from console.timing import ServerTimingMiddleware, in_request

    def slow_call():
        with timed("kafka"):
            return "answered"

    def view(request):
        from django.http import HttpResponse

        with ThreadPoolExecutor(max_workers=1) as pool:
            counted, lost = pool.submit(in_request(slow_call)), pool.submit(slow_call)
            return HttpResponse(counted.result() + lost.result())

    request = rf.get("/")
    request.user = SimpleNamespace(is_authenticated=True)
    response = ServerTimingMiddleware(view)(request)

    assert response.content == b"answeredanswered"
    assert 'kafka;dur=' in response["Server-Timing"] and 'desc="1 call"' in response["Server-Timing"]


@pytest.mark.django_db
def test_anonymous_callers_get_no_timings(client):
    assert "Server-Timing" not in client.get("/accounts/login/").headers
    assert "Server-Timing" not in client.get("/health/live").headers
