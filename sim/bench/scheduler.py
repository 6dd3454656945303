"""A Dask scheduler named by ``--scheduler``, asked who it is within a bounded time.

A TCP connect proves only that something listens: a port that accepts and never answers (a stuck
scheduler, another service) made ``Client(...)`` wait forever (issue 37). :func:`handshake` opens
Distributed's own comm to the address and sends the scheduler's ``identity`` request, all under one
deadline (:data:`TIMEOUT_ENV`, default :data:`DEFAULT_TIMEOUT_S`); no answer in time is one
:class:`~sim.errors.UsageError` line.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sim.errors import UsageError
from sim.numbers import env_seconds

#: How long a scheduler gets to connect and answer its identity request, in seconds.
DEFAULT_TIMEOUT_S = 10.0
#: The environment variable that overrides :data:`DEFAULT_TIMEOUT_S` (tests set a fraction of a second).
TIMEOUT_ENV = "MEMSIM_SCHEDULER_TIMEOUT"


def timeout_s() -> float:
    """The handshake's deadline in seconds."""
    return env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT_S, hi=600.0)


async def _identity(address: str, deadline: float) -> Any:
    from distributed.comm import connect

    comm = await connect(address, timeout=deadline)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def handshake(address: str) -> None:
    """Refuse *address* unless a Dask scheduler there answers its identity request in time."""
    deadline = timeout_s()
    try:
        reply = asyncio.run(asyncio.wait_for(_identity(address, deadline), deadline))
    except TimeoutError as exc:
        raise UsageError(
            f"the Dask scheduler {address} accepted the connection but did not answer within {deadline:g} s "
            f"(set {TIMEOUT_ENV} to wait longer)"
        ) from exc
    except (OSError, ValueError, TypeError, EOFError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler {address}: {exc}") from exc
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        raise UsageError(f"{address} is not a Dask scheduler (its answer: {str(reply)[:80]!r})")
