"""The annotation page: annotators label the project's rows in a browser; labels save at once.

`AnnotationApp` is the ASGI application (server-rendered HTML, a little JavaScript for the
keyboard); `serve` runs it with uvicorn (`web.serve_app`). Labels go to
`annotations/web/<annotator>.parquet`, where `load_all_human_results` and scoring find them.
"""

from __future__ import annotations

from meta_evaluator.annotate.app import AnnotatedProject, AnnotationApp
from meta_evaluator.web import sockets

__all__ = ["AnnotatedProject", "AnnotationApp", "free_port", "serve"]

#: The call users make, which errors begin with.
_WHO = "launch_annotator"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on every address of `host` now (another program may take it).

    Raises:
        ProjectError: `host` is empty, does not resolve or is not an address of this machine.
    """
    return sockets.free_port(host, who=_WHO)


def serve(
    evaluator: AnnotatedProject,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    token: str | None = None,
    announce: bool = True,
) -> None:
    """Serve the annotation page until interrupted (Ctrl-C).

    The sockets are bound before the server starts, on every address `host` resolves to; the
    address announced (on stderr) carries the port actually bound, a free one for `port` None
    or 0.

    Args:
        evaluator: The project whose data and task are annotated.
        host: The address (or a name resolving to addresses) of this machine to listen on.
        port: The TCP port, 1 to 65535; None or 0 picks a free one.
        token: The token annotators must present; needed for a host that is not loopback.
        announce: Whether to write the page's address to stderr.

    Raises:
        ProjectError: The project has no data or task; `host` is not a loopback address and
            no token protects the page (`field="token"`); `port` is out of range, in use or
            needs privileges (`field="port"`); `host` is empty, does not resolve or is not an
            address of this machine (`field="host"`).
    """
    from meta_evaluator.web.serve import serve_app

    serve_app(
        lambda: AnnotationApp(evaluator, token=token, host=host),
        host=host,
        port=port,
        token=token,
        who=_WHO,
        title="Annotation page",
        announce=announce,
    )
