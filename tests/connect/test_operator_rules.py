"""connect/operator_rules.py: what a connector configuration written below admin may hold."""

import os

import pytest

from connect.operator_rules import (
    FILE_SINK, FILE_SOURCE, MSG_CONVERTER, MSG_FILE_REQUIRED, MSG_NO_FOLDER, MSG_PLUGIN, MSG_REFERENCE, MSG_SETTING,
    OperatorPolicy, RuleBroken, check_operator_config, inside,
)


@pytest.fixture
def policy(tmp_path):
    return OperatorPolicy(connect="c", plugins=frozenset({FILE_SOURCE, FILE_SINK}),
                          settings=("consumer.override.auto.offset.reset", "transforms.*"),
                          file_dirs=(str(tmp_path / "files"),))


def check(policy, config, *, plugin=FILE_SINK, changed=None, declared=("file",)):
    check_operator_config(policy, plugin=plugin, declared=declared, config=config,
                          changed=frozenset(config if changed is None else changed))


def test_a_file_inside_the_folder_passes(policy, tmp_path):
    check(policy, {"connector.class": FILE_SINK, "topics": "t", "file": str(tmp_path / "files" / "out.txt"),
                   "tasks.max": "1", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                   "consumer.override.auto.offset.reset": "earliest", "transforms": "x", "transforms.x.type": "y"})


@pytest.mark.parametrize("path", ["/etc/passwd", "{root}/.env", "{files}/../.env", "{files}", "files/x", "{files}x/y",
                                  "{files}/./../x"])
def test_a_file_anywhere_else_is_refused(policy, tmp_path, path):
    path = path.format(root=tmp_path, files=tmp_path / "files")
    with pytest.raises(RuleBroken, match="must be an absolute path inside a folder"):
        check(policy, {"connector.class": FILE_SOURCE, "topic": "t", "file": path}, plugin=FILE_SOURCE,
              declared=("file", "topic"))


def test_a_symbolic_link_out_of_the_folder_is_refused(policy, tmp_path):
    (tmp_path / "files").mkdir()
    os.symlink(tmp_path, tmp_path / "files" / "up")
    assert not inside(str(tmp_path / "files" / "up" / ".env"), str(tmp_path / "files"))
    assert inside(str(tmp_path / "files" / "new.txt"), str(tmp_path / "files"))


def test_without_a_folder_or_a_file_filestream_is_refused(tmp_path):
    bare = OperatorPolicy(connect="c", plugins=frozenset({FILE_SINK}))
    with pytest.raises(RuleBroken) as caught:
        check(bare, {"file": "/tmp/x"})
    assert caught.value.message == MSG_NO_FOLDER.format(key="file", connect="c")
    with pytest.raises(RuleBroken) as caught:
        check(bare, {"topics": "t"})
    assert caught.value.message == MSG_FILE_REQUIRED.format(plugin="FileStreamSinkConnector")


def test_plugins_settings_converters_and_references_outside_the_allowlist_are_refused(policy, tmp_path):
    out = str(tmp_path / "files" / "o")
    with pytest.raises(RuleBroken) as caught:
        check(policy, {"file": out}, plugin="org.apache.kafka.connect.mirror.MirrorSourceConnector")
    assert caught.value.message == MSG_PLUGIN.format(plugin="org.apache.kafka.connect.mirror.MirrorSourceConnector",
                                                     connect="c")
    for key in ("producer.override.bootstrap.servers", "topic.creation.default.partitions", "predicates",
                "consumer.override.group.id"):
        with pytest.raises(RuleBroken) as caught:
            check(policy, {"file": out, key: "x"})
        assert caught.value.message == MSG_SETTING.format(key=key, connect="c")
    with pytest.raises(RuleBroken) as caught:
        check(policy, {"file": out, "value.converter": "com.example.Evil"})
    assert caught.value.message == MSG_CONVERTER.format(key="value.converter", value="com.example.Evil")
    with pytest.raises(RuleBroken) as caught:
        check(policy, {"file": out, "topics": "${file:/work/.env:SECRET_KEY}"})
    assert caught.value.message == MSG_REFERENCE.format(key="topics")


def test_an_edit_is_judged_on_the_settings_it_changes_and_on_every_path(policy, tmp_path):
    config = {"file": str(tmp_path / "files" / "o"), "api.token": "${file:/s:t}", "other.custom": "x"}
    check(policy, config, changed={"tasks.max"})  # what an admin wrote stays as it is
    with pytest.raises(RuleBroken, match="must be an absolute path"):
        check(policy, {**config, "file": "/etc/shadow"}, changed={"tasks.max"})
