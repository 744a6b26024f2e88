"""Default CoAP and CoCoA re-written in Python from their definitions
(docs/spec/algorithms-spec.md §1 and §3.1, the Rust modules
``coapcc-rto/src/default.rs`` and ``cocoa.rs``), for the parity tests and
the cost benchmark: run beside the built-ins, they must give the same
results bit for bit."""

from __future__ import annotations

import math

import coapcc


class PyDefault(coapcc.Algorithm):
    """Default CoAP (RFC 7252): a timer drawn in [2, 3] s, doubled on each
    expiry, capped at 60 s."""

    name = "py-default"
    ack_timeout = 2.0

    def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
        return min(rng.uniform_in(self.ack_timeout, self.ack_timeout * 1.5), 60.0)

    def expire(self, now: float, exchange: coapcc.Exchange, rng: coapcc.Random) -> float:
        return min(exchange.current * 2.0, 60.0)


class Rfc6298:
    """RFC 6298's estimator with gain ``k`` (the variation against the old SRTT)."""

    def __init__(self, k: float) -> None:
        self.k = k
        self.srtt = 0.0
        self.rttvar = 0.0
        self.seeded = False

    def update(self, r: float) -> float:
        if self.seeded:
            self.rttvar = (1.0 - 0.25) * self.rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = (1.0 - 0.125) * self.srtt + 0.125 * r
        else:
            self.srtt = r
            self.rttvar = r / 2.0
            self.seeded = True
        return self.srtt + self.k * self.rttvar


def vbf(t: float) -> float:
    """CoCoA's variable backoff factor."""
    if t < 1.0:
        return 3.0
    if t <= 3.0:
        return 2.0
    return 1.5


class PyCocoa(coapcc.Algorithm):
    """CoCoA (draft-ietf-core-cocoa-03): strong and weak estimators, the
    RTO dithered in [RTO, 1.5 RTO], variable backoff truncated at 32 s,
    aging."""

    name = "py-cocoa"
    aging = True

    def __init__(self) -> None:
        self.rto = 2.0
        self.strong = Rfc6298(4.0)
        self.weak = Rfc6298(1.0)
        self.last_update: float | None = None

    def age(self, now: float) -> None:
        if self.last_update is None:
            self.last_update = now
        t = self.last_update
        if not self.aging:
            return
        rto = self.rto
        while True:
            if rto < 1.0 and now - t > 16.0 * rto:
                t += 16.0 * rto
                rto *= 2.0
            elif rto > 3.0 and now - t > 4.0 * rto:
                t += 4.0 * rto
                rto = 1.0 + 0.5 * rto
            else:
                break
        self.rto = rto
        self.last_update = t

    def start(self, now: float, outstanding: int, rng: coapcc.Random) -> float:
        self.age(now)
        if self.strong.seeded or self.weak.seeded or outstanding == 0:
            base = self.rto
        else:
            base = min(self.rto * (outstanding + 1.0), 60.0)
        return rng.uniform_in(base, base * 1.5)

    def expire(self, now: float, exchange: coapcc.Exchange, rng: coapcc.Random) -> float:
        t = exchange.current
        return max(t, min(t * vbf(t), 32.0))

    def on_ack(self, exchange: coapcc.Exchange, ack: coapcc.Ack) -> None:
        r = ack.elapsed
        if not (math.isfinite(r) and r >= 0.0):
            return
        n = exchange.retransmissions
        if n == 0:
            self.set(0.5 * self.strong.update(r) + (1.0 - 0.5) * self.rto, ack.now)
        elif n <= 2:
            self.set(0.25 * self.weak.update(r) + (1.0 - 0.25) * self.rto, ack.now)

    def set(self, rto: float, now: float) -> None:
        self.rto = max(rto, 0.001)
        self.last_update = now


class PyCocoaNoAging(PyCocoa):
    """CoCoA without aging, as the default scenario and a campaign's bare
    ``cocoa`` have it (the setting of the CoCoA evaluations)."""

    name = "py-cocoa-no-aging"
    aging = False
