"""connect/masking.py: which settings are secrets and how they are shown."""

from connect.masking import MASK, is_reference, kept_secrets, mask_config, mask_rest, scrub_text, unmask


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


def test_credentials_in_a_url_are_masked_whatever_the_settings_name():
    config = {"connection.url": "https://alice:s3cr3t@db.example:5432/orders?ssl=true",
              "mongo.uri": "mongodb://token123@h1,h2/db", "plain.url": "https://db.example/orders",
              "two": "first http://u:p@a.example then http://b.example"}
    masked = mask_config(config)
    assert masked["connection.url"] == f"https://{MASK}@db.example:5432/orders?ssl=true"
    assert masked["mongo.uri"] == f"mongodb://{MASK}@h1,h2/db"
    assert masked["plain.url"] == config["plain.url"]
    assert masked["two"] == f"first http://{MASK}@a.example then http://b.example"
    assert "s3cr3t" not in str(masked) and "token123" not in str(masked)


def test_header_and_query_secrets_mask_the_whole_value():
    config = {"headers": "Content-Type:application/json|Authorization:Bearer abc.def",
              "http.headers": "X-Api-Token: t-42", "jdbc": "jdbc:sqlserver://h;user=sa;password=Pa55",
              "query.url": "https://h.example/x?token=abc", "header.Authorization": "Basic dXNlcjpwdw==",
              "topics": "orders,payments", "login.line": 'user="u" password="${file:/s:p}"'}
    masked = mask_config(config)
    assert {k for k, v in masked.items() if v == MASK} == {"headers", "http.headers", "jdbc", "query.url",
                                                             "header.Authorization"}
    assert masked["topics"] == "orders,payments"
    assert masked["login.line"] == config["login.line"]  # its only secret is a reference the worker resolves


def test_a_url_shown_with_masked_credentials_keeps_them_when_submitted_as_shown():
    current = {"connection.url": "https://alice:s3cr3t@db.example/x", "topics": "a"}
    shown = mask_config(current)
    assert kept_secrets(shown, current) == {"connection.url"}
    assert unmask({**shown, "topics": "b"}, current) == {"connection.url": current["connection.url"], "topics": "b"}
    moved = {"connection.url": f"https://{MASK}@evil.example/x"}
    assert kept_secrets(moved, current) == frozenset() and unmask(moved, current) == moved


def test_scrubbed_text_holds_no_secret_of_the_configuration():
    config = {"connection.password": "hunter22", "connection.url": "https://alice:s3cr3t@db.example/x"}
    trace = ("ConnectException: login failed for https://alice:s3cr3t@db.example/x with hunter22\n"
             "  caused by: http://other:pw@elsewhere/")
    scrubbed = scrub_text(trace, config)
    assert "hunter22" not in scrubbed and "s3cr3t" not in scrubbed and "other:pw" not in scrubbed
    assert "db.example" not in scrubbed or MASK in scrubbed
    assert scrub_text("", config) == ""
