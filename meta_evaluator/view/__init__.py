"""The results viewer: every row of a judge beside the humans' labels, in a browser and as JSON.

`ViewerApp` is the ASGI application (server-rendered pages, no script, and a JSON API under
`/api/`); `serve` runs it with uvicorn (`web.serve_app`). It reads the project's latest
results and labels (`results.row_table`), keeps the tables in memory and reads them again
when a file changes. It only reads: nothing in the project is written.
"""

from __future__ import annotations

from meta_evaluator.view.app import ViewerApp
from meta_evaluator.view.store import ViewedProject
from meta_evaluator.web import sockets

__all__ = ["ViewedProject", "ViewerApp", "free_port", "serve"]

#: The call users make, which errors begin with.
_WHO = "launch_viewer"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on every address of `host` now (another program may take it).

    Raises:
        ProjectError: `host` is empty, does not resolve or is not an address of this machine.
    """
    return sockets.free_port(host, who=_WHO)


def serve(
    project: ViewedProject,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    token: str | None = None,
    annotate_url: str | None = None,
    announce: bool = True,
) -> None:
    """Serve the results viewer until interrupted (Ctrl-C).

    The sockets are bound before the server starts, on every address `host` resolves to; the
    address announced (on stderr) carries the port actually bound. Before that, the project's
    results are read once, so a project without any is refused at once.

    Args:
        project: The project whose results are shown.
        host: The address (or a name resolving to addresses) of this machine to listen on.
        port: The TCP port, 1 to 65535; None or 0 picks a free one.
        token: The token visitors must present; needed for a host that is not loopback.
        annotate_url: The address of the project's annotation page (`meta-evaluator
            annotate`), which the row page links to.
        announce: Whether to write the viewer's address to stderr.

    Raises:
        ProjectError: The project has no data or task, or no judge with a complete run;
            `annotate_url` is no http(s) address (`field="annotate_url"`); `host` is not a
            loopback address and no token protects the viewer (`field="token"`); `port` is out
            of range, in use or needs privileges (`field="port"`); `host` is empty, does not
            resolve or is not an address of this machine (`field="host"`).
        StateError, StorageError: A results or annotations file cannot be read.
    """
    from meta_evaluator.web.serve import serve_app

    serve_app(
        lambda: _checked_app(project, token=token, host=host, annotate_url=annotate_url),
        host=host,
        port=port,
        token=token,
        who=_WHO,
        title="Results viewer",
        announce=announce,
    )


def _checked_app(
    project: ViewedProject, *, token: str | None, host: str, annotate_url: str | None
) -> ViewerApp:
    """The app, once the project's results are read and found to hold a judge's run."""
    from meta_evaluator.errors import ProjectError

    app = ViewerApp(project, token=token, host=host, annotate_url=annotate_url)
    app.store.refresh()
    if not app.store.judges:
        results = project.paths.results_dir
        problem = (
            f"{project.project_dir}: no judge has a complete run to view (nothing finished in "
            f"{results})"
        )
        raise ProjectError(
            f"{problem}; run the judges first (meta-evaluator run {project.project_dir}), "
            "or import results (add_external_judge_results).",
            path=project.project_dir,
            field="results",
            problem=problem,
            needs="results",
            project_dir=project.project_dir,
        )
    return app
