"""The request guard and replies both pages share: an empty token is never a token, and no
page can be framed by another site."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_evaluator import MetaEvaluator
from meta_evaluator.errors import ProjectError
from meta_evaluator.web.guard import RequestGuard
from meta_evaluator.web.http import Request
from tests.view.conftest import app_for, client

COOKIE = "meta_evaluator_view_token"


def request(headers: dict[str, str], query: bytes = b"") -> Request:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "query_string": query,
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    return Request.of(scope)


@pytest.mark.parametrize("token", ["", "   "])
def test_an_empty_token_is_refused_before_serving(token: str) -> None:
    with pytest.raises(ProjectError, match="token is empty") as caught:
        RequestGuard(host="0.0.0.0", token=token, cookie=COOKIE)
    assert caught.value.field == "token"


def test_an_empty_token_presented_is_none() -> None:
    guard = RequestGuard(host="0.0.0.0", token="s3cret", cookie=COOKIE)
    host = {"host": "lab.example:8000"}
    for presented in (
        {**host, "cookie": f"{COOKIE}="},
        {**host, "authorization": "Bearer "},
    ):
        assert guard.admit(request(presented)).refusal is not None
    assert guard.admit(request(host, b"token=")).refusal is not None
    assert guard.admit(request({**host, "cookie": f"{COOKIE}=s3cret"})).refusal is None


def test_the_commands_refuse_an_empty_token(tmp_path: Path) -> None:
    from meta_evaluator.examples import create_example_project

    evaluator = create_example_project("refusal", tmp_path / "p")
    evaluator.run_judges_async()
    for launch in (evaluator.launch_viewer, evaluator.launch_annotator):
        with pytest.raises(ProjectError, match="token is empty"):
            launch(host="0.0.0.0", token="")  # type: ignore[operator]


@pytest.mark.anyio
async def test_no_page_may_be_framed_by_another_site(tmp_path: Path) -> None:
    from meta_evaluator.examples import create_example_project

    create_example_project("refusal", tmp_path / "p").run_judges_async()
    app = app_for(tmp_path / "p")
    async with client(app) as http:
        for path in ("/", "/api/summary", "/nowhere"):
            response = await http.get(path)
            assert response.headers["x-frame-options"] == "DENY", path
            assert response.headers["content-security-policy"] == "frame-ancestors 'none'"
            assert response.headers["x-content-type-options"] == "nosniff"
    assert MetaEvaluator(tmp_path / "p", load=True).data is not None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
