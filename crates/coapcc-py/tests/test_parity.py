"""The same numbers as the command line, bit for bit: ``Result.json`` against
``coapcc run --format json`` for scenarios of every network."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import coapcc


def shortened(path: Path, **fields: str) -> str:
    """The scenario file's text with some top-level-table fields replaced
    (``key = value`` lines, the first of each name)."""
    text = path.read_text()
    for key, value in fields.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)
        assert n == 1, key
    return text


def cli_flags(overrides: dict[str, Any]) -> list[str]:
    flags = []
    for key, value in overrides.items():
        if isinstance(value, list):
            value = ",".join(value)
        flags += [f"--{key}", str(value)]
    return flags


def cli_json(binary: str, scenario: Path | None, overrides: dict[str, Any]) -> str:
    args = [binary, "run"] + ([str(scenario)] if scenario else [])
    args += cli_flags(overrides) + ["--format", "json", "--threads", "2"]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return done.stdout


CASES = {
    "default": (None, {}, {"clients": 6, "replications": 2, "algorithms": ["default", "cocoa"]}),
    "dumbbell-random-errors": (
        None,
        {},
        {
            "clients": 5,
            "workload": "random",
            "errors": "high",
            "buffer": 2500,
            "replications": 2,
            "algorithms": ["default-fb1", "cocoa-s", "fasor"],
            "seed": 7,
        },
    ),
    "dumbbell-tcp": (
        "lwip/dumbbell-tcp.toml",
        {},
        {"clients": 4, "replications": 1, "algorithms": ["tcp", "tcp-lwip"]},
    ),
    "grid": (
        "pcocoa/periodic.toml",
        {"warmup_s": "10.0", "duration_s": "60.0"},
        {"replications": 2, "algorithms": ["default", "pcocoa"], "period": 4},
    ),
    "lorawan": (
        "lorawan/lorawan-periodic.toml",
        {},
        {"replications": 1, "algorithms": ["default", "cocoa"], "period": 300},
    ),
    "star": (
        "lwip/star.toml",
        {"writes": "30"},
        {"replications": 2, "algorithms": ["tcp-lwip", "tcp"]},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_is_the_command_lines_bit_for_bit(
    case: str, coapcc_bin: str, scenarios: Path, tmp_path: Path
) -> None:
    file, fields, overrides = CASES[case]
    path = None
    if file is not None:
        path = tmp_path / "scenario.toml"
        path.write_text(shortened(scenarios / file, **fields))
    expected = cli_json(coapcc_bin, path, overrides)
    result = coapcc.run(path, threads=1, **overrides)
    assert result.json + "\n" == expected
    assert len(result.summary) == len(overrides["algorithms"])


def test_a_toml_string_and_a_dict_run_as_the_file_does(scenarios: Path) -> None:
    tomllib = pytest.importorskip("tomllib")
    text = shortened(scenarios / "lwip/star.toml", writes="20")
    overrides: dict[str, Any] = {"replications": 1, "algorithms": ["tcp-lwip-cwnd"]}
    from_text = coapcc.run(text, **overrides)
    from_dict = coapcc.run(tomllib.loads(text), **overrides)
    assert from_text.network == "star"
    assert from_dict.json == from_text.json
