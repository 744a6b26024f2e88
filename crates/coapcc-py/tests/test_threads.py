"""The GIL is released while simulating, and Ctrl-C stops a run."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

import coapcc

LONG = {"clients": 100, "replications": 8, "algorithms": ["default", "cocoa"], "threads": 1}


def test_python_threads_run_while_a_scenario_simulates() -> None:
    done = threading.Event()
    results: list[coapcc.Result] = []

    def simulate() -> None:
        results.append(coapcc.run(clients=40, replications=2, threads=1))
        done.set()

    worker = threading.Thread(target=simulate)
    started = time.perf_counter()
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - started
    assert results and results[0].runs == 4
    # With the GIL held for the whole run, this loop could not have turned.
    assert elapsed > 0.05
    assert ticks > 10


def test_ctrl_c_stops_a_run_with_keyboard_interrupt() -> None:
    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        coapcc.run(**LONG)
    stopped = time.perf_counter() - started
    timer.join()
    # A full run of LONG takes many times this (16 runs of 100 clients).
    assert stopped < 5.0
    # The package still works afterwards.
    assert coapcc.run(clients=2, replications=1, algorithms=["default"]).runs == 1
