"""A real OpenID Connect provider for the single sign-on tests: NAV's mock-oauth2-server, run from the jars Maven
fetched into .cache/. It signs real RS256 tokens and shows a login page where one types a username and the
claims the tokens should carry (groups, e-mail); any first path segment is an issuer.

We measured both candidates the issue names on this machine: mock-oauth2-server answers its discovery document
3.3 to 4.5 s after start in about 150 MB, Keycloak 26 takes 26 s (82 s on its first start) and 400 to 600 MB,
so the tests use the former (it checks neither client secrets nor redirect URIs, which the console does not
rely on)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devstack.launcher import (
    SMALL_JVM, Watched, java_command, maven_jars, start_logged, stop_process, wait_until_ready,
)
from console.paths import CACHE_DIR

IDENTITY_LIBS = CACHE_DIR / "mock-oauth2-server" / "libs"
MAIN_CLASS = "no.nav.security.mock.oauth2.StandaloneMockOAuth2ServerKt"
LOGIN_PAGE = Path(__file__).with_name("identity_login.html")


@dataclass
class IdentityProvider:
    home: Path
    port: int
    issuer_id: str = "corp"
    libs: Path = IDENTITY_LIBS
    # The provider's own token callbacks (its JSON config's "tokenCallbacks"): claims it answers with when it knows
    # no login for a request, e.g. a refresh token issued before it restarted.
    token_callbacks: list[dict] = field(default_factory=list)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.issuer_id}"

    def endpoints(self) -> dict[str, str]:
        """The discovery document's endpoints, under the settings names the console reads."""
        with urllib.request.urlopen(f"{self.issuer}/.well-known/openid-configuration", timeout=5) as response:
            found = json.load(response)
        return {"OIDC_OP_AUTHORIZATION_ENDPOINT": found["authorization_endpoint"],
                "OIDC_OP_TOKEN_ENDPOINT": found["token_endpoint"],
                "OIDC_OP_USER_ENDPOINT": found["userinfo_endpoint"],
                "OIDC_OP_JWKS_ENDPOINT": found["jwks_uri"],
                "OIDC_OP_LOGOUT_ENDPOINT": found["end_session_endpoint"]}

    @property
    def log_path(self) -> Path:
        return self.home / "identity.log"

    def start(self) -> None:
        maven_jars(self.libs, "mock-oauth2-server-*.jar",
                   f"mock-oauth2-server is missing in {self.libs}: run `make test-deps`.")
        self.home.mkdir(parents=True, exist_ok=True)
        # Any JSON config turns the interactive login off unless it says otherwise; the login page is ours (the
        # provider's own links a web font, which this machine cannot reach).
        config = {"interactiveLogin": True, "httpServer": "NettyWrapper", "loginPagePath": str(LOGIN_PAGE)}
        if self.token_callbacks:
            config["tokenCallbacks"] = self.token_callbacks
        env = {**{k: v for k, v in os.environ.items() if k not in ("JSON_CONFIG_PATH", "PORT")},
               "SERVER_HOSTNAME": "127.0.0.1", "SERVER_PORT": str(self.port), "JSON_CONFIG": json.dumps(config),
               "LOG_LEVEL": "WARN"}
        # The working directory is its own: the server reads a config.json it finds there.
        command = java_command(MAIN_CLASS, heap=("-Xmx128m",), options=SMALL_JVM, classpath=f"{self.libs}/*")
        self.process = start_logged(command, self.log_path, cwd=self.home, env=env)

    def ready(self) -> bool:
        try:
            self.endpoints()
        except OSError:
            return False
        return True

    def wait_ready(self, timeout: float = 60.0) -> None:
        wait_until_ready(self.ready, what=f"the identity provider on port {self.port}", timeout=timeout,
                         interval=0.3, watch=[Watched("the identity provider", self.process, self.log_path)])

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
