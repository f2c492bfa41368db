"""Kafka's command-line tools get the client settings in a properties file that only this user can read."""

import os
import stat

import pytest

from gateway.kafka.java import tools
from gateway.kafka.types import ClusterConnection

pytestmark = [pytest.mark.kafka]


def test_the_tools_properties_file_is_0600_while_the_tool_reads_it_and_gone_after(kafka_node, topic_factory, commit,
                                                                                   monkeypatch):
    topic = topic_factory("tools-props")
    commit("tools-props-group", {(topic, 0): 0})
    seen = []
    real = tools._java

    def watched(main_class, args, timeout):
        path = args[args.index("--command-config") + 1]
        with open(path) as properties:
            seen.append((path, stat.S_IMODE(os.stat(path).st_mode), properties.read()))
        return real(main_class, args, timeout)

    monkeypatch.setattr(tools, "_java", watched)
    # A setting the file must carry (a secret would travel the same way).
    connection = ClusterConnection("local", kafka_node.bootstrap, config={"client.id": "tools-props-test"})

    rows = tools.delete_group_offsets(connection, "tools-props-group", topic, None, timeout=20)

    assert [(r.topic, r.error) for r in rows] == [(topic, None)]
    [(path, mode, text)] = seen
    assert mode == 0o600 and "client.id=tools-props-test" in text
    assert not os.path.exists(path)
