"""The little of S3 the job page needs, for replays written to s3a:// URIs: list a prefix, stream an object.
Signed with AWS Signature Version 4 over `requests`; no SDK. Endpoint, region, addressing and the names of the
environment variables holding the keys come from settings (REPLAY_S3_*), the keys themselves only from the
environment."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

import requests
from django.conf import settings

from console.errors import ConsoleError

# Bucket names as S3 allows them; the prefix is any key text without a leading slash.
S3A_URI = re.compile(r"^s3a://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(?P<prefix>[^\s]*))?$")
MSG_BAD_URI = "An output location is s3a://BUCKET or s3a://BUCKET/PREFIX, not '{uri}'."
MSG_NO_KEY = ("Writing to S3 needs the access key and secret in the environment variables {access} and {secret} "
              "(named by REPLAY_S3_ACCESS_KEY_ENV and REPLAY_S3_SECRET_KEY_ENV); {missing} is not set.")
MSG_S3_ERROR = "The object store answered {status} for {what}: {detail}"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
TIMEOUT_S = 10


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # no leading or trailing slash; may be empty

    @property
    def uri(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}" if self.prefix else f"s3a://{self.bucket}"

    def child(self, name: str) -> S3Location:
        return S3Location(self.bucket, f"{self.prefix}/{name}" if self.prefix else name)


def parse_s3a(uri: str) -> S3Location:
    match = S3A_URI.match(uri.strip())
    if not match or ".." in (match.group("prefix") or ""):
        raise ConsoleError(MSG_BAD_URI.format(uri=uri))
    return S3Location(match.group("bucket"), (match.group("prefix") or "").strip("/"))


def is_s3a(uri: str) -> bool:
    return uri.startswith("s3a://")


@dataclass(frozen=True)
class S3Credentials:
    access_key: str
    secret_key: str


def credentials() -> S3Credentials:
    """The keys, read from the environment variables the settings name."""
    names = settings.REPLAY_S3_ACCESS_KEY_ENV, settings.REPLAY_S3_SECRET_KEY_ENV
    values = [os.environ.get(name, "") for name in names]
    missing = [name for name, value in zip(names, values) if not value]
    if missing:
        raise ConsoleError(MSG_NO_KEY.format(access=names[0], secret=names[1], missing=missing[0]))
    return S3Credentials(*values)


def spark_options() -> dict[str, str]:
    """Hadoop's s3a settings for the replay application (secrets included: they travel in the spec file)."""
    keys = credentials()
    options = {"fs.s3a.access.key": keys.access_key, "fs.s3a.secret.key": keys.secret_key,
               "fs.s3a.path.style.access": str(settings.REPLAY_S3_PATH_STYLE).lower(),
               "fs.s3a.endpoint.region": settings.REPLAY_S3_REGION,
               # Spark does not use the SDK's default provider chain then: the keys above, nothing else.
               "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}
    if settings.REPLAY_S3_ENDPOINT:
        options["fs.s3a.endpoint"] = settings.REPLAY_S3_ENDPOINT
        options["fs.s3a.connection.ssl.enabled"] = str(settings.REPLAY_S3_ENDPOINT.startswith("https")).lower()
        # S3-compatible servers (S3Proxy, older MinIO) refuse the bulk DeleteObjects that the SDK now sends with
        # its own checksum header (501 NotImplemented): one DELETE per object, of which a replay has few.
        options["fs.s3a.multiobjectdelete.enable"] = "false"
        options["fs.s3a.request.md5.header"] = "true"
    return options


@dataclass(frozen=True)
class S3Object:
    key: str
    size: int

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]


class S3Client:
    def __init__(self, keys: S3Credentials | None = None) -> None:
        self.keys = keys or credentials()
        self.endpoint = (settings.REPLAY_S3_ENDPOINT or f"https://s3.{settings.REPLAY_S3_REGION}.amazonaws.com")
        self.region = settings.REPLAY_S3_REGION
        self.path_style = settings.REPLAY_S3_PATH_STYLE

    def list(self, location: S3Location) -> list[S3Object]:
        """Every object under the prefix (as a folder), following continuation tokens."""
        found: list[S3Object] = []
        token = ""
        while True:
            query = {"list-type": "2", "prefix": f"{location.prefix}/" if location.prefix else ""}
            if token:
                query["continuation-token"] = token
            response = self._request("GET", location.bucket, "", query)
            root = ET.fromstring(response.content)
            ns = {"s3": root.tag.split("}")[0].strip("{")} if root.tag.startswith("{") else {}
            tag = (lambda name: f"s3:{name}") if ns else (lambda name: name)
            for item in root.findall(tag("Contents"), ns):
                found.append(S3Object(item.findtext(tag("Key"), "", ns), int(item.findtext(tag("Size"), "0", ns))))
            token = root.findtext(tag("NextContinuationToken"), "", ns)
            if root.findtext(tag("IsTruncated"), "false", ns) != "true" or not token:
                return found

    def stream(self, bucket: str, key: str, chunk: int = 256 * 1024) -> Iterator[bytes]:
        response = self._request("GET", bucket, key, {}, stream=True)
        try:
            yield from response.iter_content(chunk)
        finally:
            response.close()

    def _request(self, method: str, bucket: str, key: str, query: dict[str, str], *, stream: bool = False):
        scheme, _, host = self.endpoint.partition("://")
        host = host.rstrip("/")
        path = "/" + quote(key, safe="/~") if key else "/"
        if self.path_style:
            path = f"/{bucket}{path}" if key else f"/{bucket}"
        else:
            host = f"{bucket}.{host}"
        canonical_query = "&".join(f"{quote(k, safe='~')}={quote(v, safe='~')}" for k, v in sorted(query.items()))
        now = datetime.now(UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        headers = {"host": host, "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join([method, path, canonical_query,
                               "".join(f"{name}:{headers[name]}\n" for name in sorted(headers)), signed, EMPTY_SHA256])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key_bytes = ("AWS4" + self.keys.secret_key).encode()
        for part in (day, self.region, "s3", "aws4_request"):
            key_bytes = hmac.new(key_bytes, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key_bytes, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.keys.access_key}/{scope}, "
                                    f"SignedHeaders={signed}, Signature={signature}")
        url = f"{scheme}://{host}{path}" + (f"?{canonical_query}" if canonical_query else "")
        response = requests.request(method, url, headers=headers, timeout=TIMEOUT_S, stream=stream)
        if response.status_code >= 300:
            detail = response.text[:300] if not stream else response.reason
            response.close()
            raise ConsoleError(MSG_S3_ERROR.format(status=response.status_code, what=f"s3a://{bucket}/{key}",
                                                   detail=detail))
        return response
