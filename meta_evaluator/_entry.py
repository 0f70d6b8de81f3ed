"""The `meta-evaluator` console script: Ctrl-C at any moment says "stopped" and exits 130.

The command line takes a moment to import; `meta_evaluator.cli` handles Ctrl-C only once
it runs, so an interrupt landing during the import (or around the command) is caught here,
without a traceback. Nothing but the standard library is imported before the `try`
(`meta_evaluator._stopped` uses nothing else). Once the command has returned, its exit status
stands: Ctrl-C is ignored from there, so that a late one cannot turn a printed (or JSON)
status 0 into a silent 130 while the interpreter shuts down (trial 2 #10).
"""

from __future__ import annotations

import signal
import sys

from meta_evaluator._stopped import EXIT_STOPPED, say_stopped

__all__ = ["main"]


def main() -> None:
    """Import the command line and run it; Ctrl-C meanwhile exits with 130, saying so.

    After the command returns (or is stopped), SIGINT is ignored: Python restores its default
    action while shutting down, which would kill the process with 130 without a word.
    """
    try:
        from meta_evaluator.cli import main as run_command_line

        run_command_line()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        say_stopped(sys.argv[1:])
        raise SystemExit(EXIT_STOPPED) from None
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
