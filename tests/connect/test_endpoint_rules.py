"""connect/endpoint_rules.py: a Connect registration carries no secret and reads no file outside the cert folders."""

import pytest

from connect.endpoint_rules import (MSG_CERT_NEEDS_KEY, MSG_TLS_FILES_NEED_HTTPS, MSG_URL, MSG_USER_WITHOUT_PASSWORD,
                                    RegistrationRefused, check_connect_registration)


@pytest.mark.parametrize("url", ["ftp://x", "http://", "http://user:pw@host:8083", "http://h:8083/?a=1",
                                 "http://h:8083/#f", "http://h:99999", "http://h:8083/ü", "connect:8083"])
def test_addresses_with_credentials_or_oddities_are_refused(url):
    with pytest.raises(RegistrationRefused) as caught:
        check_connect_registration(url=url)
    assert caught.value.message == MSG_URL


def test_a_password_comes_only_from_a_variable_meant_for_cluster_secrets():
    check_connect_registration(url="http://h:8083", username="u", password_env="CONSOLE_SECRET_CONNECT")
    for env in ("SECRET_KEY", "HOME", "DATABASE_URL"):
        with pytest.raises(RegistrationRefused) as caught:
            check_connect_registration(url="http://h:8083", username="u", password_env=env)
        assert caught.value.field == "password_env" and env in caught.value.message
    with pytest.raises(RegistrationRefused) as caught:
        check_connect_registration(url="http://h:8083", username="u")
    assert caught.value.message == MSG_USER_WITHOUT_PASSWORD


def test_certificate_files_need_https_both_halves_and_the_cert_folders(tmp_path, settings):
    settings.CONSOLE_CLUSTER_CERT_DIRS = [str(tmp_path)]
    inside = tmp_path / "c.pem"
    with pytest.raises(RegistrationRefused) as caught:
        check_connect_registration(url="http://h:8083", ca_file=str(inside))
    assert caught.value.message == MSG_TLS_FILES_NEED_HTTPS
    with pytest.raises(RegistrationRefused) as caught:
        check_connect_registration(url="https://h:8443", cert_file=str(inside))
    assert caught.value.message == MSG_CERT_NEEDS_KEY
    with pytest.raises(RegistrationRefused) as caught:
        check_connect_registration(url="https://h:8443", ca_file="/etc/passwd")
    assert caught.value.field == "ca_file" and "outside" in caught.value.message
    check_connect_registration(url="https://h:8443", ca_file=str(inside), cert_file=str(inside),
                               key_file=str(tmp_path / "k.pem"))
