"""connect/masking.py: which settings are secrets and how they are shown."""

from connect.masking import MASK, is_reference, mask_config, mask_rest, unmask


def test_declared_passwords_and_secret_names_are_masked_and_the_rest_shown():
    config = {"connection.password": "hunter2", "api.key": "k-123", "aws.secret.access.key": "s",
              "sasl.jaas.config": 'ScramLoginModule required username="u" password="p";', "token": "t",
              "custom.field": "visible", "declared.field": "also-secret", "topics": "orders",
              "key.converter": "org.apache.kafka.connect.storage.StringConverter", "ssl.key.location": "/x.pem"}
    masked = mask_config(config, declared={"declared.field"})
    assert {k for k, v in masked.items() if v == MASK} == {
        "connection.password", "api.key", "aws.secret.access.key", "sasl.jaas.config", "token", "declared.field"}
    assert masked["key.converter"] == config["key.converter"]
    assert masked["ssl.key.location"] == "/x.pem"


def test_config_provider_references_are_shown_as_written():
    config = {"connection.password": "${file:/etc/secrets.properties:password}",
              "two.passwords": "${file:/a:b}${env:C}",
              "mixed.password": "prefix-${file:/a:b}"}
    masked = mask_config(config)
    assert masked["connection.password"] == config["connection.password"]
    assert masked["two.passwords"] == config["two.passwords"]
    assert masked["mixed.password"] == MASK  # a literal part could be a secret
    assert is_reference(" ${file:/a:b} ") and not is_reference("${}") and not is_reference(None)


def test_empty_secrets_stay_empty_so_a_person_sees_none_is_set():
    assert mask_config({"db.password": ""}) == {"db.password": ""}


def test_rest_answers_are_masked_wherever_a_config_object_is():
    entry = {"info": {"name": "n", "config": {"db.password": "x", "topics": "t"}, "tasks": [], "type": "sink"},
             "status": {"name": "n", "connector": {"state": "RUNNING"}, "tasks": []}}
    masked = mask_rest(entry)
    assert masked["info"]["config"] == {"db.password": MASK, "topics": "t"}
    assert masked["status"] == entry["status"] and entry["info"]["config"]["db.password"] == "x"


def test_a_secret_left_masked_keeps_its_value_and_a_new_one_replaces_it():
    current = {"db.password": "old", "topics": "a"}
    assert unmask({"db.password": MASK, "topics": "b"}, current) == {"db.password": "old", "topics": "b"}
    assert unmask({"db.password": "new"}, current) == {"db.password": "new"}
    assert unmask({"other.password": MASK}, current) == {"other.password": MASK}
