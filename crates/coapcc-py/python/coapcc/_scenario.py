"""Telling what a ``scenario`` argument is: a path, TOML text, a dict or None."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Union

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any], None]
"""What :func:`coapcc.run` accepts as a scenario."""


def source(scenario: Scenario) -> tuple[str, str | None, str | None]:
    """The ``(kind, text, origin)`` the native module takes for ``scenario``.

    A string holding a newline or ``=`` is TOML text (named ``<string>`` in
    errors); any other string, and any path-like object, is a file path; a
    mapping is a scenario written as nested dicts and lists (named
    ``<dict>``); ``None`` is the embedded default.
    """
    if scenario is None:
        return ("default", None, None)
    if isinstance(scenario, Mapping):
        try:
            text = json.dumps(scenario, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"scenario dict: {e}") from e
        return ("json", text, "<dict>")
    if isinstance(scenario, os.PathLike):
        return ("path", os.fspath(scenario), None)
    if isinstance(scenario, str):
        if "\n" in scenario or "=" in scenario:
            return ("toml", scenario, "<string>")
        return ("path", scenario, None)
    raise TypeError(
        f"scenario: expected a path, TOML text, a dict or None, found {type(scenario).__name__}"
    )
