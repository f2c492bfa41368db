"""Broker metrics from a Prometheus server that scrapes the brokers through Prometheus's JMX exporter agent.

The agent turns each MBean attribute into a series named `<domain>_<type>_<attribute>` with the MBean's other key
properties as labels (its default naming, which the exporter configuration in devstack/jmx_exporter.py
keeps). The console asks Prometheus's HTTP API for exactly the attributes the JMX reader reads, names each series
back as its MBean, and builds the reading with the same code (broker_mbeans.py): a chart does not change when a
cluster moves from one source to the other. Three instant queries per sample, whatever the number of brokers:
the brokers' figures, their topics' figures, and `up` (whether Prometheus can scrape each exporter at all).

Only HTTP is spoken here, with http.client: each query is bounded by one deadline whatever the server sends (a
watchdog shuts the socket when it is up), its answer by MAX_BODY; the address is checked against an allowlist
before any request is made, proxies from the environment are not used (they would see the credentials), and a
redirect is followed only on the same scheme, host and port (the credentials never go anywhere else)."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import ssl
import threading
import time
from base64 import b64encode
from urllib.parse import urlencode, urljoin, urlsplit

from gateway.kafka.broker_mbeans import MAX_TOPICS, TOPIC_METRICS, reading_from_attributes, wanted_mbeans
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.types.metrics import (JMX_CREDENTIALS, JMX_FAILED, JMX_REFUSED, JMX_TIMEOUT, JMX_TLS, TOPIC_NAME,
                                         BrokerJmxReading, JmxEndpoint)

# An instant query over the console's few MBeans for a few hundred brokers is well under a MiB.
MAX_BODY = 4 * 1024 * 1024
READ_CHUNK = 65536
ERROR_BODY = 65536  # of an error's body, only its JSON "error" text is shown
MAX_REDIRECTS = 3
MSG_TOO_BIG = "Prometheus at {url} answered more than {mib} MiB for one query"
MSG_REDIRECT_AWAY = ("Prometheus at {url} redirected the query to {where}, another scheme, host or port: not followed "
                     "(the credentials go only to the address registered); register that address instead")
MSG_REDIRECTS = "Prometheus at {url} redirected the query more than {most} times"
MSG_URL = ("A Prometheus address is http(s)://HOST[:PORT][/PATH] (a host name or IP address; letters, digits and "
           ". _ ~ - / in the path; no user, query or fragment): {url!r} is not.")
_URL = re.compile(r"^(https?)://(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)"
                  r"(?::(\d{1,5}))?(/[A-Za-z0-9._~/-]{0,200})?$")
# The MBean key properties the console's MBeans have besides `type`, in the order Kafka registers them.
_KEYS = ("name", "request", "version", "topic")


def check_prometheus_url(url: str) -> str:
    """The address without a trailing slash, or InvalidRequest: it reaches the HTTP client, so only what it must be
    passes."""
    url = (url or "").strip()
    match = _URL.match(url)
    if not match or (match[3] and not 0 < int(match[3]) < 65536):
        raise InvalidRequest(MSG_URL.format(url=url[:300]))
    return url.rstrip("/")


def _family(object_name: str) -> tuple[str, str, dict[str, str]]:
    """(series name prefix, MBean domain:type, other key properties) of an object name or pattern."""
    domain, _, properties = object_name.partition(":")
    pairs = dict(p.split("=", 1) for p in properties.split(",") if p != "*")
    kind = pairs.pop("type")
    return f"{domain.replace('.', '_')}_{kind}", f"{domain}:type={kind}", pairs


def _alternatives(values) -> str:
    return "|".join(re.sub(r"([.\[\]()|*+?^$\\{}])", r"\\\1", v) for v in sorted(values))


def _matcher(values) -> str:
    return _alternatives(values).replace("\\", "\\\\").replace('"', '\\"')


def queries(targets: list[JmxEndpoint], *, topics: bool) -> dict[str, str]:
    """PromQL of one sample: "brokers", "topics" (when asked) and "up", each limited to the targets' ports (their
    hosts are matched after, as Prometheus may name an exporter's host differently from Kafka)."""
    ports = f'instance=~".+:({_matcher({str(t.port) for t in targets})})"'
    names, mbeans, requests = set(), set(), {""}
    for name, attributes in wanted_mbeans(False):
        prefix, _, labels = _family(name)
        names |= {f"{prefix}_{a}" for a in attributes}
        mbeans.add(labels["name"])
        requests.add(labels.get("request", ""))
    found = {"brokers": f'{{__name__=~"{_matcher(names)}",name=~"{_matcher(mbeans)}",'
                        f'request=~"{_matcher(requests)}",topic="",{ports}}}',
             "up": f"up{{{ports}}}"}
    if topics:
        prefix, _, _ = _family(TOPIC_METRICS)
        topic_names = {f"{prefix}_{a}" for a in ("Count", "OneMinuteRate")}
        mbeans = {n.split(",name=")[1].split(",")[0] for n, _ in wanted_mbeans(True) if n.endswith(",topic=*")}
        found["topics"] = (f'{{__name__=~"{_matcher(topic_names)}",name=~"{_matcher(mbeans)}",topic!="",'
                           f'{ports}}}')
    return found


def _wanted_index(topics: bool) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """series name -> (MBean domain:type, attribute, exact object names or patterns it may belong to)."""
    index: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for name, attributes in wanted_mbeans(topics):
        prefix, base, _ = _family(name)
        for attribute in attributes:
            _, _, names = index.get(f"{prefix}_{attribute}", (base, attribute, ()))
            index[f"{prefix}_{attribute}"] = (base, attribute, (*names, name))
    return index


def object_name(series: dict[str, str], index) -> tuple[str, str] | None:
    """(MBean object name, attribute) a series of the exporter stands for, or None when it is not one asked for."""
    found = index.get(series.get("__name__", ""))
    if found is None:
        return None
    base, attribute, allowed = found
    name = base + "".join(f",{key}={series[key]}" for key in _KEYS if series.get(key))
    topic = series.get("topic", "")
    for pattern in allowed:
        if pattern == name:
            return name, attribute
        if pattern.endswith(",topic=*") and topic and TOPIC_NAME.match(topic) and name == pattern[:-1] + topic:
            return name, attribute
        if pattern.endswith(",*") and not topic and name.startswith(pattern[:-1]):
            return name, attribute
    return None


def instance_brokers(instances: set[str], targets: list[JmxEndpoint]) -> dict[str, JmxEndpoint]:
    """Prometheus instance label -> the target it is: its exact address, or else the one instance on that port."""
    mapped: dict[str, JmxEndpoint] = {}
    for target in targets:
        host = f"[{target.host.strip('[]')}]" if ":" in target.host else target.host
        exact = f"{host}:{target.port}"
        if exact in instances:
            mapped[exact] = target
            continue
        same_port = [i for i in instances if i.rpartition(":")[2] == str(target.port) and i not in mapped]
        if len(same_port) == 1:
            mapped[same_port[0]] = target
    return mapped


class PrometheusFailed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


class _Deadline:
    """The time one query has left, and a watchdog that shuts the connection's socket when it is up: a socket's own
    timeout bounds each read, so a server sending a byte now and then would hold a read loop for ever."""

    def __init__(self, ends: float) -> None:
        self.ends = ends  # time.monotonic()'s
        self.expired = False
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        return self.ends - time.monotonic()

    def watch(self, connection: http.client.HTTPConnection) -> None:
        def cut() -> None:
            self.expired = True
            with contextlib.suppress(OSError, AttributeError):
                connection.sock.shutdown(socket.SHUT_RDWR)

        self.cancel()
        self._timer = threading.Timer(max(0.0, self.left()), cut)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _connection(url: str, timeout: float) -> http.client.HTTPConnection:
    """No proxy from the environment: it would see the credentials. https:// is checked against the system's CAs."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.netloc, timeout=timeout, context=ssl.create_default_context())
    return http.client.HTTPConnection(parts.netloc, timeout=timeout)


def _same_origin(a: str, b: str) -> bool:
    first, second = urlsplit(a), urlsplit(b)
    return (first.scheme, first.hostname, first.port) == (second.scheme, second.hostname, second.port)


def _read_capped(response: http.client.HTTPResponse, url: str) -> bytes:
    declared = response.getheader("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise PrometheusFailed(JMX_FAILED, MSG_TOO_BIG.format(url=url, mib=MAX_BODY >> 20))
    body = bytearray()
    while len(body) <= MAX_BODY:
        chunk = response.read(min(READ_CHUNK, MAX_BODY + 1 - len(body)))
        if not chunk:
            break
        body += chunk
    if len(body) > MAX_BODY:
        raise PrometheusFailed(JMX_FAILED, MSG_TOO_BIG.format(url=url, mib=MAX_BODY >> 20))
    return bytes(body)


def _post(url: str, path: str, form: bytes, headers: dict[str, str], deadline: _Deadline) -> tuple[int, bytes]:
    """(status, body) of a POST to `path` under the server `url`, following at most MAX_REDIRECTS redirects on the
    same scheme, host and port; a redirect elsewhere is refused before anything (the credentials above all) is sent
    there."""
    target = url + path
    for _ in range(MAX_REDIRECTS + 1):
        if deadline.left() <= 0:
            raise TimeoutError
        connection = _connection(target, deadline.left())
        deadline.watch(connection)
        try:
            parts = urlsplit(target)
            connection.request("POST", parts.path or "/", body=form, headers=headers)
            response = connection.getresponse()
            if response.status in (301, 302, 303, 307, 308):
                location = urljoin(target, response.getheader("Location", ""))
                if not _same_origin(url, location):
                    raise PrometheusFailed(JMX_FAILED, MSG_REDIRECT_AWAY.format(url=url, where=location[:200]))
                target = location
                continue
            body = _read_capped(response, url) if response.status == 200 else response.read(ERROR_BODY)
            if deadline.expired:  # the watchdog's shutdown reads as the end of the body
                raise TimeoutError
            return response.status, body
        finally:
            deadline.cancel()
            connection.close()
    raise PrometheusFailed(JMX_FAILED, MSG_REDIRECTS.format(url=url, most=MAX_REDIRECTS))


def _ask(url: str, query: str, *, ends: float, timeout: float, username: str,
         password: str) -> tuple[float, list[dict]]:
    """(evaluation time, result vector) of one instant query, by `ends` (time.monotonic()'s) whatever the server
    does; `timeout` is the whole call's, for the message."""
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if username:
        headers["Authorization"] = "Basic " + b64encode(f"{username}:{password}".encode()).decode()
    deadline = _Deadline(ends)
    try:
        status, body = _post(url, "/api/v1/query", urlencode({"query": query}).encode(), headers, deadline)
    except PrometheusFailed:
        raise
    except (OSError, http.client.HTTPException) as exc:
        if deadline.expired or deadline.left() <= 0 or isinstance(exc, socket.timeout | TimeoutError):
            raise PrometheusFailed(JMX_TIMEOUT, f"Prometheus at {url} did not answer within {timeout:.1f} s") from None
        if isinstance(exc, ssl.SSLError):
            raise PrometheusFailed(JMX_TLS, f"Prometheus at {url} failed the TLS handshake: {exc}") from None
        if isinstance(exc, ConnectionRefusedError):
            raise PrometheusFailed(JMX_REFUSED,
                                   f"Prometheus at {url} refused the connection: is it running there?") from None
        raise PrometheusFailed(JMX_FAILED, f"Prometheus at {url} could not be asked: {exc}") from None
    if status in (401, 403):
        raise PrometheusFailed(JMX_CREDENTIALS, f"Prometheus at {url} refused the credentials (HTTP {status})")
    if status != 200:
        detail = ""
        with contextlib.suppress(ValueError, AttributeError):
            detail = str(json.loads(body).get("error", ""))[:300]
        raise PrometheusFailed(JMX_FAILED, f"Prometheus at {url} answered HTTP {status}: "
                                           f"{detail or http.client.responses.get(status, 'unexpected status')}")
    try:
        answer = json.loads(body)
        data = answer["data"]
        return float(data["result"][0]["value"][0]) if data["result"] else time.time(), data["result"]
    except (ValueError, KeyError, TypeError, IndexError):
        raise PrometheusFailed(JMX_FAILED, f"Prometheus at {url} did not answer its query API's JSON") from None


def read_prometheus(url: str, targets: list[JmxEndpoint], *, topics: bool = True, timeout: float = 5.0,
                    username: str = "", password: str = "") -> list[BrokerJmxReading]:
    """One reading per target (a broker's exporter, as Prometheus scrapes it), with figures or the reason why none:
    Prometheus silent or refusing, the exporter not scraped, or scraped and failing."""
    url = check_prometheus_url(url)
    began = time.monotonic()
    ends = began + timeout  # one deadline for the whole call, its three queries together
    if not targets:
        return []
    asked, at = {}, time.time()
    try:
        for key, query in queries(targets, topics=topics).items():
            at, asked[key] = _ask(url, query, ends=ends, timeout=timeout, username=username, password=password)
    except PrometheusFailed as failed:
        return [BrokerJmxReading(broker=t.broker, address=t.address, read_at=time.time(),
                                 duration_s=time.monotonic() - began, error=failed.message, error_kind=failed.kind)
                for t in targets]
    instances = {s["metric"].get("instance", "") for results in asked.values() for s in results}
    mapped = instance_brokers(instances, targets)
    by_broker = {t.broker: instance for instance, t in mapped.items()}
    up = {s["metric"].get("instance"): s["value"][1] for s in asked["up"]}
    index = _wanted_index(topics)
    found: dict[str, dict[str, dict[str, float]]] = {}
    for key in ("brokers", "topics"):
        for series in asked.get(key, ()):
            named = object_name(series["metric"], index)
            instance = series["metric"].get("instance", "")
            if named is None or instance not in mapped:
                continue
            try:
                value = float(series["value"][1])
            except (ValueError, TypeError, IndexError):
                continue
            found.setdefault(instance, {}).setdefault(named[0], {})[named[1]] = value
    took = time.monotonic() - began
    readings = []
    for target in targets:
        instance = by_broker.get(target.broker)
        error = ""
        if instance is None or instance not in up:
            error = (f"Prometheus at {url} does not scrape the exporter at {target.address} (no 'up' series for "
                     f"it): add it to a scrape job")
        elif up[instance] != "1":
            error = f"Prometheus at {url} cannot scrape the exporter at {instance} (up = {up[instance]})"
        elif not found.get(instance):
            error = (f"The exporter at {instance} gives Prometheus none of the broker's MBeans: is it Prometheus's "
                     f"JMX exporter agent on a broker, with default names?")
        if error:
            readings.append(BrokerJmxReading(broker=target.broker, address=target.address, read_at=at,
                                             duration_s=took, error=error, error_kind=JMX_REFUSED if "up =" in error
                                             else JMX_FAILED))
            continue
        attributes = _cap_topics(found[instance])
        readings.append(reading_from_attributes(target.broker, target.address, at, took, attributes))
    return readings


def _cap_topics(found: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """At most MAX_TOPICS topics per broker, the first by name, as the JMX reader keeps."""
    prefix = f"{TOPIC_METRICS},name="
    topics = sorted({n.rpartition(",topic=")[2] for n in found if n.startswith(prefix) and ",topic=" in n})
    if len(topics) <= MAX_TOPICS:
        return found
    kept = set(topics[:MAX_TOPICS])
    return {n: v for n, v in found.items()
            if not (n.startswith(prefix) and ",topic=" in n) or n.rpartition(",topic=")[2] in kept}
