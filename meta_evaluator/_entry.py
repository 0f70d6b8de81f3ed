"""The `meta-evaluator` console script: Ctrl-C at any moment says "stopped" and exits 130.

The command line takes about a second to import; `meta_evaluator.cli` handles Ctrl-C only once
it runs, so an interrupt landing during the import (or around the command) is caught here,
without a traceback. Nothing but the standard library is imported before the `try`.
"""

from __future__ import annotations

import json
import sys

__all__ = ["main"]

EXIT_STOPPED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT), as `meta_evaluator.cli`'s."""


def main() -> None:
    """Import the command line and run it; Ctrl-C meanwhile exits with 130, saying so."""
    try:
        from meta_evaluator.cli import main as run_command_line

        run_command_line()
    except KeyboardInterrupt:
        _say_stopped(sys.argv[1:])
        raise SystemExit(EXIT_STOPPED) from None


def _say_stopped(args: list[str]) -> None:
    """`stopped by Ctrl-C` on standard error, and with --json the JSON object it promises."""
    try:
        sys.stderr.write("stopped by Ctrl-C\n")
        sys.stderr.flush()
        if "--json" in (args[: args.index("--")] if "--" in args else args):
            command = next((a for a in args if not a.startswith("-")), None)
            summary = {"command": command, "exit_status": EXIT_STOPPED, "error": "stopped"}
            sys.stdout.write(json.dumps(summary) + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:  # a second Ctrl-C while saying it: just stop
        pass
