"""Algorithms written in Python, beside the built-in ones.

A subclass of :class:`Algorithm` is one destination's retransmission timer
and congestion control, with the events of the Rust trait
``coapcc_rto::CongestionControl``. Pass the class where an algorithm name
goes (``coapcc.run(algorithms=[MyRto, "cocoa"])``,
``coapcc.Campaign(path, algorithms=[MyRto])``,
``coapcc.load(uri, algorithm=MyRto)``): it is registered under its
:attr:`Algorithm.name` and runs like any built-in. See
``docs/guides/your-own-algorithm.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, ClassVar

from . import _core
from ._core import Ack, Exchange, Random

__all__ = ["Ack", "Algorithm", "Exchange", "Random", "register"]

REQUIRED = ("start", "expire")
"""The methods every algorithm defines; the others have defaults."""


class Algorithm:
    """Base class of algorithms written in Python.

    One instance holds what is known about **one destination** (a client
    talking to one server has one); the simulator and the real client make
    one per destination with ``cls()`` and call its methods, each with the
    run's clock ``now`` in seconds:

    - :meth:`start` (required): an exchange is about to be sent; return its
      first timeout in seconds, or an :class:`Exchange` with your own
      per-exchange values (``state``, ``aux``, ``aux2``).
    - :meth:`expire` (required): the timer of ``exchange`` ran out and it
      is sent again; return the next timeout. ``exchange.current`` is the
      timer that ran out and ``exchange.retransmissions`` the retransmissions
      before this one (coapcc counts this one after the call).
    - :meth:`on_ack`: the first acknowledgement of ``exchange`` arrived;
      ``ack.elapsed`` is the time since its original transmission.
    - :meth:`on_failure`: ``exchange`` was abandoned (MAX_RETRANSMIT, a reset).
    - :meth:`reset`: forget everything about the destination (a random
      client's new batch); by default, ``__init__`` runs again.

    A timeout must be a number of seconds greater than 0 and at most
    1.8·10¹⁰. Random draws go through ``rng`` (:class:`Random`), the run's
    own stream, so that results depend only on the scenario and its seed.
    An exception, a timeout that is not a number, or an instance whose
    state grows past :attr:`max_state_bytes` stops the run with
    :class:`coapcc.AlgorithmError` naming the method, the value and the
    run's time, the exception being its ``__cause__``.
    """

    name: ClassVar[str]
    """The name runs, tables and stores use (default: the class's name):
    1 to 64 ASCII letters, digits, ``-``, ``_``, ``.``."""
    summary: ClassVar[str] = ""
    """One line for ``coapcc.algorithms()``."""
    source: ClassVar[str] = ""
    """Where it is described (a paper, a file)."""
    max_state_bytes: ClassVar[int] = 1 << 20
    """The bound on one instance's state (measured by walking its
    attributes every 1024 events); above it the run stops."""

    def start(self, now: float, outstanding: int, rng: Random) -> float | Exchange:
        """A new exchange: its first timeout (s) or an :class:`Exchange`.

        ``outstanding``: other exchanges to this destination still
        unacknowledged (0 with NSTART = 1).
        """
        raise NotImplementedError

    def expire(self, now: float, exchange: Exchange, rng: Random) -> float:
        """The timer of ``exchange`` ran out: the next timeout (s)."""
        raise NotImplementedError

    def on_ack(self, exchange: Exchange, ack: Ack) -> None:
        """The first acknowledgement of ``exchange`` arrived (at ``ack.now``)."""

    def on_failure(self, now: float, exchange: Exchange) -> None:
        """``exchange`` was abandoned."""

    def reset(self) -> None:
        """Forget everything about the destination: runs ``__init__`` again."""
        type(self).__init__(self)


def name_of(cls: type) -> str:
    """The registry name of ``cls``."""
    name = getattr(cls, "name", None)
    return cls.__name__ if name is None else name


def _lacking(cls: type) -> list[str]:
    """The required methods ``cls`` does not define."""
    lacking = []
    for method in REQUIRED:
        f = getattr(cls, method, None)
        if not callable(f) or f is getattr(Algorithm, method):
            lacking.append(method)
    return lacking


def _defines(cls: type, method: str) -> bool:
    return callable(getattr(cls, method, None))


def register(cls: type) -> str:
    """Register ``cls`` and return its name (registering it again, or a
    new class under the same name, replaces the class for later runs).

    Raises :class:`coapcc.CoapccError` if the class lacks a required
    method, its name is not valid or is taken by a built-in, or one fresh
    instance's state is above :attr:`Algorithm.max_state_bytes`; an
    exception of its ``__init__`` propagates.
    """
    if not isinstance(cls, type):
        raise TypeError(f"expected an algorithm class, found {cls!r}")
    name = name_of(cls)
    if not isinstance(name, str):
        raise _core.CoapccError(
            f"class {cls.__qualname__}: `name` must be a string, found {name!r}"
        )
    lacking = _lacking(cls)
    if lacking:
        listed = ", ".join(f"`{m}`" for m in lacking)
        raise _core.CoapccError(
            f"algorithm `{name}` (class {cls.__qualname__}): lacks the method(s) {listed}; "
            "see coapcc.Algorithm"
        )
    limit = getattr(cls, "max_state_bytes", Algorithm.max_state_bytes)
    if not isinstance(limit, int) or limit <= 0:
        raise _core.CoapccError(
            f"algorithm `{name}`: `max_state_bytes` must be a positive int, found {limit!r}"
        )
    sample = cls()
    size = _state_bytes(sample)
    if size > limit:
        raise _core.CoapccError(
            f"algorithm `{name}`: a fresh instance's state is {size} bytes, above its bound "
            f"of {limit} bytes (`max_state_bytes`)"
        )
    summary = getattr(cls, "summary", "") or _first_line(cls.__doc__)
    _core.register_algorithm(
        name,
        cls,
        summary,
        str(getattr(cls, "source", "") or ""),
        size,
        limit,
        _defines(cls, "marking"),
        _defines(cls, "spurious_detected"),
    )
    return name


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0]


def names(algorithms: str | Iterable[str | type] | None) -> str | None:
    """The comma-separated names of ``algorithms``, classes registered."""
    if algorithms is None or isinstance(algorithms, str):
        return algorithms
    if isinstance(algorithms, type):
        return register(algorithms)
    return ",".join(a if isinstance(a, str) else register(a) for a in algorithms)


_ATOMS = (int, float, complex, str, bytes, bool, type(None))


def _state_bytes(obj: Any) -> int:
    """An estimate of the memory ``obj`` holds: ``sys.getsizeof`` of it and
    of everything reachable through its attributes and containers (each
    object once; classes, functions and modules not counted)."""
    seen: set[int] = set()
    stack = [obj]
    total = 0
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, (type, type(sys), type(_state_bytes))):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, _ATOMS):
            continue
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        d = getattr(o, "__dict__", None)
        if isinstance(d, dict):
            stack.append(d)
        slots = getattr(type(o), "__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if hasattr(o, slot):
                stack.append(getattr(o, slot))
    return total
