"""The object store: the in-memory backend agrees with S3 (boto3 against moto) on every operation.

The differential machine follows Hypothesis' ``tests/nocover/test_database_agreement.py``: one set of
rules drives :class:`~sim.objects.MemoryStore`, a moto in-process :class:`~sim.objects.S3Store` and a
deliberately trivial reference model (a dict, listed by sorting UTF-8 bytes) with the same operations,
and asserts that all three agree, including list order under unicode keys, ``start_after``, and
conditional creates (``if_none_match``) racing in the same simulated instant.
"""

from __future__ import annotations

import collections
import itertools
import urllib.request
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from strategies import StoreOp, bodies, key_prefixes, object_keys, start_afters, store_ops, xml_safe

from sim.engine import Simulation
from sim.errors import MemsimError, UsageError
from sim.objects import (
    MemoryStore,
    ObjectStore,
    PreconditionFailed,
    S3Store,
    moto_server_store,
    moto_store,
    open_store,
    s3_sort_key,
    store,
)


# -- the reference model -----------------------------------------------------------------------------
def model_list(model: dict[str, bytes], prefix: str, start_after: str | None) -> list[str]:
    """S3 semantics, spelled out: keys with *prefix*, strictly after *start_after*, in UTF-8 order."""
    after = (start_after or "").encode("utf-8")
    return sorted(
        (k for k in model if k.startswith(prefix) and k.encode("utf-8") > after),
        key=lambda k: k.encode("utf-8"),
    )


def outcome(call: object) -> object:
    """The result of *call*, or the name of the memsim error it raised."""
    try:
        return call()  # type: ignore[operator]
    except MemsimError as exc:
        return type(exc).__name__


def race_conditional_puts(target: ObjectStore, key: str, first: bytes, second: bytes) -> list[str]:
    """Two SimPy writers issue ``put(if_none_match=True)`` on *key* at the same simulated instant;
    returns the winners' names."""
    sim = Simulation(0)
    winners: list[str] = []

    def writer(name: str, body: bytes):  # type: ignore[no-untyped-def]
        yield sim.timeout(1.0)
        try:
            target.put(key, body, if_none_match=True)
            winners.append(name)
        except PreconditionFailed:
            pass

    sim.process(writer("first", first))
    sim.process(writer("second", second))
    sim.run()
    sim.close()
    return winners


def apply(target: ObjectStore, op: StoreOp) -> object:
    """Apply one generated operation to *target* and return what it observed."""
    if op.name == "put":
        target.put(op.key, op.body)
        return None
    if op.name == "put_if_none_match":
        return outcome(lambda: target.put(op.key, op.body, if_none_match=True))
    if op.name == "get":
        return target.get(op.key)
    if op.name == "exists":
        return target.exists(op.key)
    if op.name == "delete":
        target.delete(op.key)
        return None
    return target.list(op.key, op.start_after)


def apply_model(model: dict[str, bytes], op: StoreOp) -> object:
    """The same operation on the dict model."""
    if op.name == "put":
        model[op.key] = op.body
        return None
    if op.name == "put_if_none_match":
        if op.key in model:
            return "PreconditionFailed"
        model[op.key] = op.body
        return None
    if op.name == "get":
        return model.get(op.key)
    if op.name == "exists":
        return op.key in model
    if op.name == "delete":
        model.pop(op.key, None)
        return None
    return model_list(model, op.key, op.start_after)


# -- the differential machine ------------------------------------------------------------------------
class StoreAgreement(RuleBasedStateMachine):
    """MemoryStore, S3 on moto and a dict, driven with the same operations, must agree on every result."""

    keys = Bundle("keys")

    def __init__(self, s3: S3Store) -> None:
        super().__init__()
        self.memory = MemoryStore()
        self.s3 = s3
        self.model: dict[str, bytes] = {}
        self.invariant_lists = 0  # list calls the invariant itself makes on the memory store

    def both(self, call: object) -> object:
        """Run *call(store)* on both backends, assert they agree, return the common result."""
        mem = outcome(lambda: call(self.memory))  # type: ignore[operator]
        s3 = outcome(lambda: call(self.s3))  # type: ignore[operator]
        assert mem == s3
        return mem

    @initialize(
        target=keys,
        seeded=st.lists(
            st.tuples(object_keys().filter(xml_safe), bodies),
            min_size=1,
            max_size=5,
            unique_by=lambda kb: kb[0],
        ),
    )
    def seed(self, seeded: list[tuple[str, bytes]]) -> object:
        """Start from a few stored objects, so lists, gets and conditional puts meet existing keys."""
        for key, body in seeded:
            self.both(lambda s, key=key, body=body: s.put(key, body))
            self.model[key] = body
        return multiple(*(k for k, _ in seeded))

    @rule(target=keys, key=object_keys().filter(xml_safe))
    def new_key(self, key: str) -> str:
        """Keys are XML-safe here: see test_get_missing_key_with_control_character_on_s3."""
        return key

    @rule(key=keys, body=bodies)
    def put(self, key: str, body: bytes) -> None:
        self.both(lambda s: s.put(key, body))
        self.model[key] = body

    @rule(key=keys, body=bodies)
    def put_if_none_match(self, key: str, body: bytes) -> None:
        expected = "PreconditionFailed" if key in self.model else None
        assert self.both(lambda s: s.put(key, body, if_none_match=True)) == expected
        self.model.setdefault(key, body)

    @rule(key=keys, first=bodies, second=bodies)
    def race_if_none_match(self, key: str, first: bytes, second: bytes) -> None:
        """Two conditional creates at the same instant: exactly one wins on an absent key, none on a
        present one, and the stored body is the winner's."""
        existed = key in self.model
        winners = self.both(lambda s: race_conditional_puts(s, key, first, second))
        assert winners == ([] if existed else ["first"])
        if not existed:
            self.model[key] = first
        assert self.both(lambda s: s.get(key)) == self.model[key]

    @rule(key=keys)
    def get(self, key: str) -> None:
        assert self.both(lambda s: s.get(key)) == self.model.get(key)

    @rule(key=keys)
    def exists(self, key: str) -> None:
        assert self.both(lambda s: s.exists(key)) == (key in self.model)

    @rule(key=keys)
    def delete(self, key: str) -> None:
        self.both(lambda s: s.delete(key))
        self.model.pop(key, None)

    @rule(prefix=key_prefixes(), start_after=start_afters())
    def list(self, prefix: str, start_after: str | None) -> None:
        expected = model_list(self.model, prefix, start_after)
        assert self.both(lambda s: s.list(prefix, start_after)) == expected

    @rule(key=keys, cut=st.integers(0, 8), start_after=st.none() | keys)
    def list_under_existing_prefix(self, key: str, cut: int, start_after: str | None) -> None:
        prefix = key[:cut]
        expected = model_list(self.model, prefix, start_after)
        assert self.both(lambda s: s.list(prefix, start_after)) == expected

    @invariant()
    def memory_matches_model(self) -> None:
        self.invariant_lists += 1
        assert self.memory.list() == model_list(self.model, "", None)
        assert self.memory.total_bytes() == sum(len(b) for b in self.model.values())

    @invariant()
    def ops_counted_alike(self) -> None:
        own = collections.Counter(list=self.invariant_lists)
        assert self.memory.ops - own == self.s3.ops - collections.Counter()

    def teardown(self) -> None:
        try:
            assert self.s3.list() == model_list(self.model, "", None)
            assert {k: self.s3.get(k) for k in self.model} == self.model
        finally:
            self.s3.close()


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[S3Store]:
    """One ``moto_store()`` kept open for the module, so moto's mock and the boto3 client (~0.25 s to
    set up) are made once; each example gets a fresh bucket on its client."""
    keeper = moto_store()
    yield keeper
    keeper.close()


@pytest.mark.moto
def test_memory_store_agrees_with_moto(moto_s3: S3Store) -> None:
    """Generated put / conditional put / race / get / exists / delete / list programs give the same
    results on MemoryStore, S3 on moto in-process and the dict model."""
    buckets = itertools.count()

    def machine() -> StoreAgreement:
        bucket = f"agreement-{next(buckets)}"
        moto_s3.client.create_bucket(Bucket=bucket)
        return StoreAgreement(S3Store(moto_s3.client, bucket))

    run_state_machine_as_test(
        machine,  # type: ignore[arg-type]  # a factory is fine at run time
        settings=settings(
            max_examples=25,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.mark.moto
def test_moto_server_backend_agrees_with_memory() -> None:
    """The same short program (unicode keys, a conditional-create race, prefix + start_after listing)
    gives the same results over HTTP against a moto server on 127.0.0.1 as in memory."""
    ops = [
        StoreOp("put", "a/😀", b"1"),
        StoreOp("put", "a/\uffff", b"2"),
        StoreOp("put", "a/é", b"3"),
        StoreOp("put", "a/z", b"4"),
        StoreOp("put", "b", b"5"),
        StoreOp("put", "a b/c d", b"6"),
        StoreOp("put_if_none_match", "a/z", b"x"),
        StoreOp("put_if_none_match", "new", b"7"),
        StoreOp("list", "a/"),
        StoreOp("list", "a/", start_after="a/z"),
        StoreOp("list", "", start_after="a/é"),
        StoreOp("delete", "a/z"),
        StoreOp("delete", "missing"),
        StoreOp("exists", "a/z"),
        StoreOp("get", "a b/c d"),
        StoreOp("list", "a"),
    ]
    memory = MemoryStore()
    server = moto_server_store()
    try:
        assert [outcome(lambda o=o: apply(server, o)) for o in ops] == [
            outcome(lambda o=o: apply(memory, o)) for o in ops
        ]
        assert race_conditional_puts(server, "race", b"A", b"B") == ["first"]
        assert server.get("race") == b"A"
        assert server.list() == [*memory.list(), "race"]
        # The objects really are on the server (not intercepted by an in-process mock): ask it over HTTP.
        url = f"{server.client.meta.endpoint_url}/{server.bucket}?list-type=2"
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert b"<Key>race</Key>" in resp.read()
    finally:
        server.close()


# -- MemoryStore against the dict model, many examples (fast) -----------------------------------------
@given(store_ops())
def test_memory_store_matches_dict_model(ops: list[StoreOp]) -> None:
    """Every generated operation sequence observes on MemoryStore exactly what the dict model predicts."""
    memory: MemoryStore = MemoryStore()
    model: dict[str, bytes] = {}

    for op in ops:
        assert outcome(lambda op=op: apply(memory, op)) == apply_model(model, op), op


# -- MemoryStore unit tests --------------------------------------------------------------------------
def test_list_sorts_by_utf8_bytes() -> None:
    """Keys list in UTF-8 byte order: ASCII, then Latin-1, then BMP private use, U+FFFF, then astral."""
    s = MemoryStore()
    for k in ("😀", "\uffff", "\ue000", "é", "z", "Z", "a/b", "a"):
        s.put(k, b"")

    expected = ["Z", "a", "a/b", "z", "é", "\ue000", "\uffff", "😀"]
    assert s.list() == expected
    assert expected == sorted(expected, key=s3_sort_key)


def test_start_after_excludes_the_key_itself_and_everything_before() -> None:
    """``start_after`` is exclusive and need not exist; it combines with the prefix."""
    s = MemoryStore()
    for k in ("p/1", "p/2", "p/3", "q/1"):
        s.put(k, b"")

    assert s.list("p/", start_after="p/2") == ["p/3"]
    assert s.list("p/", start_after="p/15") == ["p/2", "p/3"]
    assert s.list("p/", start_after="a") == ["p/1", "p/2", "p/3"]
    assert s.list("p/", start_after="p/9") == []
    assert s.list("p/", start_after="q") == []
    assert s.list("", start_after="p/3") == ["q/1"]
    assert s.list("p/", start_after="") == ["p/1", "p/2", "p/3"]


def test_list_prefix_is_literal_not_a_directory() -> None:
    """A prefix matches any key starting with it (``p`` matches ``p/1`` and ``pq``), recursively."""
    s = MemoryStore()
    for k in ("p", "p/1", "p/x/2", "pq", "o"):
        s.put(k, b"")

    assert s.list("p") == ["p", "p/1", "p/x/2", "pq"]
    assert s.list("p/") == ["p/1", "p/x/2"]
    assert s.list("nothing") == []


def test_conditional_put_keeps_the_first_body() -> None:
    """``if_none_match`` on an existing key raises PreconditionFailed and leaves the body alone;
    after a delete it succeeds again."""
    s = MemoryStore()
    s.put("k", b"first", if_none_match=True)

    with pytest.raises(PreconditionFailed):
        s.put("k", b"second", if_none_match=True)
    assert s.get("k") == b"first"
    s.delete("k")
    s.put("k", b"third", if_none_match=True)
    assert s.get("k") == b"third"


def test_two_conditional_creates_race_one_wins() -> None:
    """Two SimPy processes conditionally creating one key at the same instant: exactly one wins."""
    s = MemoryStore()

    assert race_conditional_puts(s, "lock", b"A", b"B") == ["first"]
    assert s.get("lock") == b"A"
    assert race_conditional_puts(s, "lock", b"C", b"D") == []


def test_plain_put_overwrites_and_delete_missing_is_silent() -> None:
    """A plain put replaces the body; deleting a missing key is not an error (as in S3)."""
    s = MemoryStore()
    s.put("k", b"1")
    s.put("k", b"2")
    s.delete("absent")

    assert s.get("k") == b"2"
    assert s.get("absent") is None
    assert not s.exists("absent")


def test_list_sees_keys_added_and_removed_after_a_list() -> None:
    """The cached sorted index is invalidated by new keys and deletes, not by overwrites."""
    s = MemoryStore()
    s.put("b", b"")
    assert s.list() == ["b"]
    s.put("a", b"")
    assert s.list() == ["a", "b"]
    s.put("a", b"again")
    s.delete("b")

    assert s.list() == ["a"]


def test_body_is_copied_on_put() -> None:
    """Mutating the bytearray given to put does not change the stored object."""
    s = MemoryStore()
    body = bytearray(b"abc")
    s.put("k", body)  # type: ignore[arg-type]
    body[0] = ord("X")

    assert s.get("k") == b"abc"


def test_ops_counter_counts_every_call() -> None:
    """``ops`` counts put/get/exists/delete/list calls; total_bytes is not an operation."""
    s = MemoryStore()
    s.put("a", b"12")
    s.put("a", b"3", if_none_match=False)
    s.get("a")
    s.exists("a")
    s.list()
    s.delete("a")
    s.total_bytes()

    assert dict(s.ops) == {"put": 2, "get": 1, "exists": 1, "list": 1, "delete": 1}


def test_open_store_by_name() -> None:
    """``open_store("memory")`` is a MemoryStore; an unknown kind is a one-line UsageError."""
    assert isinstance(open_store("memory"), MemoryStore)
    with pytest.raises(UsageError, match="unknown store 'nope'"):
        open_store("nope")


def test_store_context_manager_closes() -> None:
    """``store()`` yields an open store and closes it on exit."""
    with store("memory") as s:
        s.put("k", b"v")
        assert s.get("k") == b"v"


@pytest.mark.moto
def test_moto_store_buckets_are_fresh_and_nest() -> None:
    """Each ``moto_store()`` gets its own empty bucket; closing one leaves the other usable."""
    a = moto_store()
    b = moto_store()
    try:
        a.put("k", b"a")
        assert b.list() == []
        a.close()
        b.put("k", b"b")
        assert b.get("k") == b"b"
    finally:
        a.close()
        b.close()


@pytest.mark.moto
def test_moto_conditional_put_maps_to_precondition_failed() -> None:
    """moto's 412 for ``IfNoneMatch="*"`` surfaces as memsim's PreconditionFailed."""
    with store("moto") as s:
        s.put("k", b"1", if_none_match=True)
        with pytest.raises(PreconditionFailed):
            s.put("k", b"2", if_none_match=True)
        assert s.get("k") == b"1"


def test_empty_key_is_rejected_like_s3() -> None:
    """S3 refuses the empty key (boto3: "Invalid length for parameter Key"); the in-memory store must
    refuse it too, with a memsim error, or a model that writes it passes in memory and fails on S3."""
    with pytest.raises(MemsimError):
        MemoryStore().put("", b"x")


@pytest.mark.moto
def test_get_missing_key_with_control_character_on_s3() -> None:
    """``get`` of a missing key is None on every backend, whatever the key holds. S3's NoSuchKey error
    body echoes the key, which XML cannot carry when it holds U+0001 or U+FFFF, so botocore reports a
    bare 404 instead of NoSuchKey and S3Store lets it escape."""
    with store("moto") as s:
        assert MemoryStore().get("a\x01") is None
        assert s.get("a\x01") is None
