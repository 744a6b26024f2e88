"""The GIL is released while simulating, and Ctrl-C stops a run."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

import coapcc

# 60 runs of 400 clients on one thread: tens of seconds in full.
LONG = {"clients": 400, "replications": 30, "algorithms": ["default", "cocoa"], "threads": 1}


def test_python_threads_run_while_a_scenario_simulates() -> None:
    done = threading.Event()
    results: list[coapcc.Result] = []

    def simulate() -> None:
        results.append(coapcc.run(clients=100, replications=4, threads=1))
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert results and results[0].runs == 8
    # With the GIL held for the whole run, this loop could not have turned.
    assert ticks > 10


def test_ctrl_c_stops_a_run_with_keyboard_interrupt() -> None:
    timer = threading.Timer(0.2, _thread.interrupt_main)
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        coapcc.run(**LONG)
    stopped = time.perf_counter() - started
    timer.join()
    # Stopped after the run in progress, far before LONG's end.
    assert stopped < 3.0
    # The package still works afterwards.
    assert coapcc.run(clients=2, replications=1, algorithms=["default"]).runs == 1
