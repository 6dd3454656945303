"""An object store with one interface: in memory, or S3 through boto3.

Keys sort as S3 sorts them (by UTF-8 bytes). :meth:`ObjectStore.put` with ``if_none_match=True`` is
S3's ``IfNoneMatch="*"`` conditional create and raises :class:`PreconditionFailed` when the key exists.
:meth:`ObjectStore.list` returns every key under a prefix (recursive), excluding keys ``<=``
``start_after``, in one sorted list (pagination is followed).

Backends:

* :class:`MemoryStore`: a dict; the fast path for property tests.
* :class:`S3Store`: boto3 against any endpoint. :func:`open_store` builds it against moto in-process
  (``moto``, the embedded default), a moto server started on 127.0.0.1 on a free port (``moto-server``),
  or a URL the user gives (``http://127.0.0.1:9000`` for MinIO).

Every backend counts its operations in :attr:`ObjectStore.ops` (put/get/list/delete/exists).
"""

from __future__ import annotations

import abc
import bisect
import collections
import contextlib
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

from sim.errors import MemsimError, UsageError


class PreconditionFailed(MemsimError):
    """A conditional put found the key already present."""


class InvalidKey(MemsimError, ValueError):
    """An object key S3 would refuse (the empty key)."""


def _check_key(key: str) -> None:
    if not key:
        raise InvalidKey("object keys must be non-empty")


def s3_sort_key(key: str) -> bytes:
    """S3 lists keys in UTF-8 binary order."""
    return key.encode("utf-8")


class ObjectStore(abc.ABC):
    """The interface of an object store. Subclasses implement ``_put``, ``_get``, ``_delete``, ``_keys``."""

    name = "abstract"

    def __init__(self) -> None:
        self.ops: collections.Counter[str] = collections.Counter()

    @abc.abstractmethod
    def _put(self, key: str, body: bytes, if_none_match: bool) -> None:
        """Extension point."""

    @abc.abstractmethod
    def _get(self, key: str) -> bytes | None:
        """Extension point."""

    @abc.abstractmethod
    def _delete(self, key: str) -> None:
        """Extension point."""

    @abc.abstractmethod
    def _keys(self, prefix: str, start_after: str | None) -> list[str]:
        """Extension point."""

    def put(self, key: str, body: bytes, *, if_none_match: bool = False) -> None:
        """Store *body* at *key*; with *if_none_match*, raise :class:`PreconditionFailed` if it exists."""
        _check_key(key)
        self.ops["put"] += 1
        self._put(key, body, if_none_match)

    def get(self, key: str) -> bytes | None:
        """The body at *key*, or None."""
        self.ops["get"] += 1
        return self._get(key)

    def exists(self, key: str) -> bool:
        """Whether *key* exists (a HEAD)."""
        self.ops["exists"] += 1
        return self._get(key) is not None

    def delete(self, key: str) -> None:
        """Remove *key*; deleting a missing key is not an error (as in S3)."""
        self.ops["delete"] += 1
        self._delete(key)

    def list(self, prefix: str = "", start_after: str | None = None) -> list[str]:
        """Every key starting with *prefix* and sorting after *start_after*, in S3 order."""
        self.ops["list"] += 1
        return self._keys(prefix, start_after)

    def total_bytes(self, prefix: str = "") -> int:
        """The bytes stored under *prefix*."""
        return sum(len(self._get(k) or b"") for k in self._keys(prefix, None))

    def close(self) -> None:  # noqa: B027 - optional hook: most backends hold nothing to release
        """Release the backend's resources."""


class MemoryStore(ObjectStore):
    """An in-memory object store with S3's ordering and conditional-create semantics."""

    name = "memory"

    def __init__(self) -> None:
        super().__init__()
        self._objects: dict[str, bytes] = {}
        # Keys kept sorted as they arrive. For valid Unicode, UTF-8 byte order is code-point order, so
        # plain str comparison sorts as S3 does (tests pin this with astral and private-use keys).
        self._sorted: list[str] = []

    def _put(self, key: str, body: bytes, if_none_match: bool) -> None:
        if key in self._objects:
            if if_none_match:
                raise PreconditionFailed(key)
        else:
            key.encode("utf-8")  # a key S3 could not carry (a lone surrogate) fails here, as on S3
            bisect.insort(self._sorted, key)
        self._objects[key] = bytes(body)

    def _get(self, key: str) -> bytes | None:
        return self._objects.get(key)

    def _delete(self, key: str) -> None:
        if self._objects.pop(key, None) is not None:
            del self._sorted[bisect.bisect_left(self._sorted, key)]

    def _keys(self, prefix: str, start_after: str | None) -> list[str]:
        keys = self._sorted
        if start_after is not None and start_after >= prefix:
            i = bisect.bisect_right(keys, start_after)
        else:
            i = bisect.bisect_left(keys, prefix)
        out = []
        n = len(keys)
        while i < n and keys[i].startswith(prefix):
            out.append(keys[i])
            i += 1
        return out


class S3Store(ObjectStore):
    """An object store on an S3 bucket through boto3.

    With a *namespace* (``"memsim-123-1/"``) every key lives under that prefix in the bucket and the store
    shows keys without it, so runs sharing a user's bucket do not see each other's objects.
    """

    name = "s3"

    def __init__(self, client: Any, bucket: str, *, on_close: Any = None, namespace: str = "") -> None:
        super().__init__()
        self.client = client
        self.bucket = bucket
        self.namespace = namespace
        self._on_close = on_close

    def _put(self, key: str, body: bytes, if_none_match: bool) -> None:
        from botocore.exceptions import ClientError

        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self.namespace + key, "Body": body}
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"
        try:
            self.client.put_object(**kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("PreconditionFailed", "ConditionalRequestConflict", "412"):
                raise PreconditionFailed(key) from exc
            raise

    def _get(self, key: str) -> bytes | None:
        from botocore.exceptions import ClientError

        try:
            resp = self.client.get_object(Bucket=self.bucket, Key=self.namespace + key)
        except ClientError as exc:
            # NoSuchKey; or a bare 404 when the error body echoes a key XML cannot carry (U+0001, U+FFFF)
            if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
                return None
            raise
        body: bytes = resp["Body"].read()
        return body

    def _delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.namespace + key)

    def _keys(self, prefix: str, start_after: str | None) -> list[str]:
        ns = self.namespace
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": ns + prefix}
        if start_after:
            kwargs["StartAfter"] = ns + start_after
        out: list[str] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(**kwargs):
            out.extend(obj["Key"][len(ns) :] for obj in page.get("Contents", []))
        return out

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
            self._on_close = None


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client(endpoint_url: str | None) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        aws_access_key_id="memsim",
        aws_secret_access_key="memsim-secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, s3={"addressing_style": "path"}),
    )


_moto_depth = 0
_moto_mock: Any = None


def _moto_start() -> None:
    global _moto_depth, _moto_mock
    if _moto_depth == 0:
        from moto import mock_aws

        _moto_mock = mock_aws()
        _moto_mock.start()
    _moto_depth += 1


def _moto_stop() -> None:
    global _moto_depth, _moto_mock
    _moto_depth -= 1
    if _moto_depth == 0 and _moto_mock is not None:
        _moto_mock.stop()
        _moto_mock = None


_bucket_seq = 0


def _new_bucket(client: Any, bucket: str | None) -> str:
    global _bucket_seq
    if bucket is None:
        _bucket_seq += 1
        bucket = f"memsim-{_bucket_seq}"
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=bucket)
    return bucket


def moto_store(bucket: str | None = None) -> S3Store:
    """S3 through boto3 against moto in-process (no sockets); each call gets a fresh bucket."""
    _moto_start()
    client = _client(None)
    return S3Store(client, _new_bucket(client, bucket), on_close=_moto_stop)


class MotoServer:
    """A moto server on 127.0.0.1 on a free port, request log silenced; stop it with :meth:`stop`."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = _free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._start_bounded()
        self.url = f"http://127.0.0.1:{self.port}"

    def _start_bounded(self) -> None:
        """Start the server, waiting at most ``MEMSIM_MOTO_TIMEOUT`` seconds (default 30): moto's own
        ``start`` waits without a bound for a server thread that may have died (its port taken)."""
        import threading

        from sim.numbers import env_seconds

        limit = env_seconds("MEMSIM_MOTO_TIMEOUT", 30.0)
        starter = threading.Thread(target=self._server.start, name="memsim-moto-start", daemon=True)
        starter.start()
        starter.join(limit)
        if starter.is_alive():
            raise UsageError(
                f"the moto server on 127.0.0.1:{self.port} did not start within {limit:g} s "
                "(set MEMSIM_MOTO_TIMEOUT to wait longer)"
            )

    def stop(self) -> None:
        self._server.stop()


def moto_server_store(bucket: str | None = None) -> S3Store:
    """S3 through boto3 against a fresh moto server on 127.0.0.1 (stopped on close)."""
    server = MotoServer()
    client = _client(server.url)
    return S3Store(client, _new_bucket(client, bucket), on_close=server.stop)


_namespace_seq = 0
#: Seconds an endpoint gets to accept a connection and to answer the first request.
PROBE_TIMEOUT_S = 3


def check_endpoint(url: str) -> str:
    """*url*, if it is a usable ``http(s)://host[:port]`` endpoint URL; one-line :class:`UsageError`."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise UsageError(f"invalid endpoint URL {url!r}: {exc}") from exc
    if parts.username is not None or parts.password is not None:
        # Never echoed, never recorded in a trace's meta: the URL would carry the secret along.
        raise UsageError(
            "invalid endpoint URL: it carries credentials (USER:PASSWORD@); give them as "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead"
        )
    if parts.scheme not in ("http", "https") or not host:
        raise UsageError(f"invalid endpoint URL {url!r}: expected http(s)://HOST[:PORT]")
    if parts.query or parts.fragment:
        raise UsageError(
            f"invalid endpoint URL {url!r}: expected http(s)://HOST[:PORT] without ?query or #fragment"
        )
    if port is not None and not 0 < port < 65536:
        raise UsageError(f"invalid endpoint URL {url!r}: port out of range")
    return url


def endpoint_store(url: str, bucket: str | None = None) -> S3Store:
    """S3 through boto3 against *url* (MinIO, LocalStack, ...), credentials from the environment.

    The bucket (default ``memsim``) is created if missing; each store gets its own key namespace
    ``memsim-<pid>-<n>/``, emptied when it opens and deleted when it closes. Raises :class:`UsageError`
    (one line) when the endpoint cannot be reached or refuses the credentials.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    global _namespace_seq
    check_endpoint(url)
    _namespace_seq += 1
    namespace = f"memsim-{os.getpid()}-{_namespace_seq}/"
    # The first calls (bucket, namespace) go through a probe client with short timeouts and no retry,
    # so an endpoint that is black-holed or never answers fails in seconds; the run's own client then
    # allows a retry and a longer read.
    probe = boto3.client(
        "s3",
        endpoint_url=url,
        config=Config(
            retries={"max_attempts": 1, "mode": "standard"},
            connect_timeout=PROBE_TIMEOUT_S,
            read_timeout=PROBE_TIMEOUT_S,
        ),
    )
    client = boto3.client(
        "s3",
        endpoint_url=url,
        config=Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=3, read_timeout=20),
    )
    try:
        name = _new_bucket(probe, bucket or "memsim")
        store = S3Store(probe, name, namespace=namespace)
        for key in store.list():
            store.delete(key)
    except (BotoCoreError, ClientError) as exc:
        raise UsageError(f"cannot use the S3 endpoint {url}: {exc}") from exc
    store.client = client

    def wipe() -> None:
        with contextlib.suppress(BotoCoreError, ClientError):
            for key in store._keys("", None):
                store._delete(key)

    store._on_close = wipe
    store.ops.clear()
    return store


STORE_KINDS = ("memory", "moto", "moto-server")


def open_store(kind: str = "memory", bucket: str | None = None) -> ObjectStore:
    """A store by name: ``memory``, ``moto`` (in-process), ``moto-server``, or an ``http(s)://`` URL."""
    if kind == "memory":
        return MemoryStore()
    if kind == "moto":
        return moto_store(bucket)
    if kind == "moto-server":
        return moto_server_store(bucket)
    if kind.startswith(("http://", "https://")):
        return endpoint_store(kind, bucket)
    raise UsageError(f"unknown store {kind!r}: expected one of {', '.join(STORE_KINDS)} or an http(s):// URL")


@contextlib.contextmanager
def store(kind: str = "memory", bucket: str | None = None) -> Iterator[ObjectStore]:
    """:func:`open_store` as a context manager that closes the store."""
    s = open_store(kind, bucket)
    try:
        yield s
    finally:
        s.close()
