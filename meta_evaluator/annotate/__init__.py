"""The annotation page: annotators label the project's rows in a browser; labels save at once.

`AnnotationApp` is the ASGI application (server-rendered HTML, a little JavaScript for the
keyboard); `serve` runs it with uvicorn. Labels go to `annotations/web/<annotator>.parquet`,
where `load_all_human_results` and scoring find them.
"""

from __future__ import annotations

import sys

from meta_evaluator.annotate._http import is_loopback
from meta_evaluator.annotate.app import AnnotatedProject, AnnotationApp
from meta_evaluator.errors import ProjectError

__all__ = ["AnnotatedProject", "AnnotationApp", "free_port", "serve"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on every address of `host` now (another program may take it).

    Raises:
        ProjectError: `host` is empty, does not resolve or is not an address of this machine.
    """
    from meta_evaluator.annotate._listen import listen

    sockets = listen(host, 0)
    port = int(sockets[0].getsockname()[1])
    for sock in sockets:
        sock.close()
    return port


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
    import uvicorn

    from meta_evaluator.annotate._listen import check_port, listen

    wanted = check_port(port)
    if token is None and not is_loopback(host):
        raise ProjectError(
            f"launch_annotator: host {host!r} lets others reach the page; give a token "
            "(token=... or --token) that they must present, or use 127.0.0.1.",
            field="token",
        )
    app = AnnotationApp(evaluator, token=token, host=host)  # checks the project before binding
    sockets = listen(host, wanted)
    try:
        chosen = int(sockets[0].getsockname()[1])
        app.port = chosen
        if announce:
            suffix = f"?token={token}" if token else ""
            shown = f"[{host}]" if ":" in host else host
            sys.stderr.write(
                f"Annotation page: http://{shown}:{chosen}/{suffix}  (Ctrl-C stops it)\n"
            )
        config = uvicorn.Config(app, host=host, port=chosen, log_level="warning", lifespan="on")
        uvicorn.Server(config).run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
