"""The cost of an algorithm written in Python: the same scenario run with
the built-in CoCoA and with its Python re-implementation (bit-identical
results, checked by tests/test_own_algorithm.py), one thread each, best of
``--repeat`` wall times, and events per second.

    python3 crates/coapcc-py/bench/python_algorithm.py [--clients 100] [--exchanges 50]

A benchmark, not a test: it prints figures and asserts only that the two
runs computed the same thing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from own_algorithms import PyCocoaNoAging  # noqa: E402

import coapcc  # noqa: E402


def timed(algorithm: str | type, args: argparse.Namespace) -> tuple[float, coapcc.Result]:
    """Best wall time of ``args.repeat`` runs of the default scenario."""
    best = float("inf")
    result = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = coapcc.run(
            clients=args.clients,
            replications=1,
            algorithms=[algorithm],
            errors=args.errors,
            threads=1,
            force=True,
        )
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--clients", type=int, default=100)
    p.add_argument("--errors", default="none", help="link errors: none, low, medium, high")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    rows = []
    for algorithm in ("cocoa", PyCocoaNoAging):
        wall, r = timed(algorithm, args)
        rows.append((getattr(algorithm, "name", algorithm), wall, r))
    (_, _, a), (_, _, b) = rows
    same = a.clients.drop(columns=["algorithm"]).equals(b.clients.drop(columns=["algorithm"]))
    assert same, "the Python re-implementation computed something else"
    exchanges = int(a.clients["completed"].sum())
    print(
        f"default scenario, {args.clients} clients, {exchanges} exchanges, errors {args.errors}, "
        "1 replication, 1 thread"
    )
    print(f"{'algorithm':<20} {'wall s':>8} {'events':>10} {'events/s':>12}")
    for name, wall, r in rows:
        print(f"{name:<20} {wall:>8.3f} {r.events:>10} {r.events / wall:>12.0f}")
    print(f"Python / built-in wall time: {rows[1][1] / rows[0][1]:.1f}x")


if __name__ == "__main__":
    main()
