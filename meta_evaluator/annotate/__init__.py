"""The annotation page: annotators label the project's rows in a browser; labels save at once.

`AnnotationApp` is the ASGI application (server-rendered HTML, a little JavaScript for the
keyboard); `serve` runs it with uvicorn. Labels go to `annotations/web/<annotator>.parquet`,
where `load_all_human_results` and scoring find them.
"""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING

from meta_evaluator.annotate._http import is_loopback
from meta_evaluator.annotate.app import AnnotationApp
from meta_evaluator.errors import ProjectError

if TYPE_CHECKING:
    from meta_evaluator.project import MetaEvaluator

__all__ = ["AnnotationApp", "free_port", "serve"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on `host` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve(
    evaluator: MetaEvaluator,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    token: str | None = None,
    announce: bool = True,
) -> None:
    """Serve the annotation page until interrupted (Ctrl-C).

    Raises:
        ProjectError: The project has no data or task, or `host` is not a loopback address and
            no token protects the page.
    """
    import uvicorn

    if token is None and not is_loopback(host):
        raise ProjectError(
            f"launch_annotator: host {host!r} lets others reach the page; give a token "
            "(token=... or --token) that they must present, or use 127.0.0.1.",
            field="token",
        )
    chosen = port if port is not None else free_port(host)
    app = AnnotationApp(evaluator, token=token, host=host, port=chosen)
    if announce:
        suffix = f"?token={token}" if token else ""
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(f"Annotation page: http://{shown}:{chosen}/{suffix}  (Ctrl-C stops it)\n")
    config = uvicorn.Config(app, host=host, port=chosen, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()
