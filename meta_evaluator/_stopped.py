"""What a command stopped by Ctrl-C says: `stopped by Ctrl-C`, and with `--json` its JSON object.

Standard library only: the console script (`meta_evaluator._entry`) imports it before the
command line, so that an interrupt during those imports is said as one during a command is.
"""

from __future__ import annotations

import json
import sys

__all__ = ["EXIT_STOPPED", "say_stopped"]

EXIT_STOPPED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT)."""


def say_stopped(args: list[str]) -> None:
    """Say `stopped by Ctrl-C` on standard error (and the JSON object with `--json`).

    With --json among `args`, standard output ends with
    `{"command": ..., "exit_status": 130, "error": "stopped"}`, as after any other error.
    """
    try:
        sys.stderr.write("stopped by Ctrl-C\n")
        sys.stderr.flush()
        given = args[: args.index("--")] if "--" in args else args
        if "--json" in given:
            command = next((a for a in given if not a.startswith("-")), None)
            summary = {"command": command, "exit_status": EXIT_STOPPED, "error": "stopped"}
            sys.stdout.write(json.dumps(summary) + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:  # a second Ctrl-C while saying it: just stop
        pass
