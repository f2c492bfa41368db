"""JMX options of the dev and test brokers (devstack/kafka_jmx.py): pure, no broker started."""

from __future__ import annotations

import socket
import stat

from devstack.kafka_jmx import DEV_JMX_PORT_OFFSET, JmxSecurity, dev_jmx_port, jmx_options


def test_loopback_one_port_and_no_password_by_default(tmp_path):
    options = jmx_options(40000, tmp_path)
    assert "-Dcom.sun.management.jmxremote.port=40000" in options
    assert "-Dcom.sun.management.jmxremote.rmi.port=40000" in options
    assert "-Dcom.sun.management.jmxremote.host=127.0.0.1" in options
    assert "-Dcom.sun.management.jmxremote.authenticate=false" in options


def test_a_password_lives_in_files_only_the_owner_reads_never_on_the_command_line(tmp_path):
    options = jmx_options(40000, tmp_path, JmxSecurity("monitor", "s3cret-pw"))
    assert not any("s3cret-pw" in o for o in options)
    passwords = tmp_path / "jmx" / "jmxremote.password"
    assert passwords.read_text() == "monitor s3cret-pw\n"
    assert stat.S_IMODE(passwords.stat().st_mode) == 0o600
    assert (tmp_path / "jmx" / "jmxremote.access").read_text() == "monitor readonly\n"


def test_a_taken_or_impossible_dev_port_turns_jmx_off_rather_than_the_broker():
    assert dev_jmx_port(65535 - DEV_JMX_PORT_OFFSET + 1) is None
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        assert dev_jmx_port(held.getsockname()[1] - DEV_JMX_PORT_OFFSET) is None
