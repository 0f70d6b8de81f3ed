"""The request guard and replies both pages share: an empty token is never a token, and no
page can be framed by another site."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_evaluator.errors import ProjectError
from meta_evaluator.web.guard import Refusal, RefusalReason, RefusalWording, RequestGuard
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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


WORDING = RefusalWording(page="test page", origin="Not from here.", size="Too much.")


@pytest.mark.parametrize(
    ("reason", "status", "title"),
    [
        ("host", 421, "Wrong address"),
        ("token", 401, "Token needed"),
        ("origin", 403, "Refused"),
        ("size", 413, "Too large"),
    ],
)
def test_a_refusal_has_one_status_and_title_on_every_page(
    reason: RefusalReason, status: int, title: str
) -> None:
    refusal = Refusal(reason)
    assert (refusal.status, refusal.title) == (status, title)


def test_a_wrong_address_names_the_page_and_its_own_address() -> None:
    for host, shown in (("127.0.0.1", "127.0.0.1"), ("::1", "[::1]")):
        assert WORDING.message(Refusal("host"), host) == (
            f"This test page answers at {shown} (or localhost) only, not at the name this "
            "request was sent to; open the address the server printed."
        )
    assert WORDING.message(Refusal("token"), "::1") == (
        "Open the link with ?token=... that the project owner shared."
    )
    assert WORDING.message(Refusal("origin"), "::1") == "Not from here."
    assert WORDING.message(Refusal("size"), "::1") == "Too much."


@pytest.mark.anyio
async def test_both_pages_word_a_refusal_the_same_but_for_their_own_messages(
    tmp_path: Path,
) -> None:
    """The viewer and the annotation page share the titles, statuses and the wrong-address
    and token messages; each keeps its own words for cross-site requests and large bodies."""
    import html

    import httpx

    from meta_evaluator.annotate import AnnotationApp
    from meta_evaluator.examples import create_example_project
    from meta_evaluator.view import ViewerApp

    evaluator = create_example_project("refusal", tmp_path / "p")
    evaluator.run_judges_async()
    pages = {"viewer": ViewerApp, "annotation page": AnnotationApp}
    for page, make in pages.items():
        app = make(evaluator, host="::1", token="s3cret")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://[::1]:1") as http:
            wrong = await http.get("/", headers={"host": "rebound.example"})
            unknown = await http.get("/summary?token=nope")
            foreign = await http.post(
                "/?token=s3cret", headers={"origin": "http://elsewhere.example"}
            )
        for response, title in ((wrong, "Wrong address"), (unknown, "Token needed")):
            assert title in response.text
        assert (wrong.status_code, unknown.status_code, foreign.status_code) == (421, 401, 403)
        assert f"This {page} answers at [::1] (or localhost) only" in html.unescape(wrong.text)
        assert "that the project owner shared." in html.unescape(unknown.text)
        assert ("nothing was saved" in foreign.text) == (page == "annotation page")
        assert ("only reads anyway" in foreign.text) == (page == "viewer")
