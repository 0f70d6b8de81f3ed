"""The viewer's pages and who may read them: escaping, read-only (405), DNS rebinding (421),
the token (401, its own cookie, Bearer), HEAD; through an ASGI client."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.view.conftest import BASE, JUDGE, app_for, client, small_project

pytestmark = pytest.mark.anyio

TOKEN = "s3cret"


class _Links(HTMLParser):
    """The links of a page (href and text) and the text of its script elements."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.scripts = 0
        self._href: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag == "a":
            self._href, self._text = dict(attrs).get("href") or "", ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, self._text.strip()))
            self._href = None

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text += data


def links(page: str) -> _Links:
    parser = _Links()
    parser.feed(page)
    return parser


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A project whose ids, data and labels try to inject markup."""
    return small_project(
        tmp_path / "hostile",
        ["<img src=x onerror=alert(1)>", "q'2"],
        ["<script>alert('x')</script>", "</td><b>bold</b>"],
        ["yes", "no"],
        {"ana": ["no", "no"], "b.o-b": ["yes", None]},
    )


async def test_markup_in_data_and_ids_shows_as_text(hostile: Path) -> None:
    async with client(app_for(hostile)) as http:
        listed = await http.get("/", params={"q": "<script>"})
        everything = await http.get("/")
        row = await http.get("/rows/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
        summary = await http.get("/summary")
    for page in (listed, everything, row, summary):
        assert page.status_code == 200
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert "</td><b>" not in page.text
        assert links(page.text).scripts == 0  # the viewer sends no script at all
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in everything.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in row.text
    assert "value='&lt;script&gt;'" in listed.text  # the search box keeps the text, escaped
    assert "rows 1–1 of 1" in listed.text


async def test_the_list_page_shows_filters_flags_matrix_and_rows(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        page = await http.get("/", params={"judge": JUDGE, "page_size": 10})
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["cache-control"] == "no-store"
    found = links(page.text)
    rows = [h for h, _ in found.links if h.startswith("/rows/")]
    assert len(rows) == 10 and rows[0].startswith("/rows/101?")
    assert "rows 1–10 of 40" in page.text
    cells = [h for h, _ in found.links if "human_label=" in h]
    assert len(cells) == 4  # two labels: a 2 x 2 matrix, each cell a link to its rows
    for href in cells:
        query = parse_qs(urlsplit(href).query)
        assert query["judge"] == [JUDGE] and set(query) >= {"judge_label", "human_label"}
    nexts = [h for h, text in found.links if text == "next ›"]
    assert nexts and parse_qs(urlsplit(nexts[0]).query)["page"] == ["2"]
    chips = re.findall(r"data-flag='(\w+)'", page.text)
    assert chips == ["disagree", "humans_split", "invalid", "error"]


async def test_the_row_page_links_back_and_to_labelling(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        plain = await http.get("/rows/103", params={"flag": "disagree", "page": "2"})
    async with client(app_for(refusal, annotate_url="http://127.0.0.1:9000")) as http:
        linked = await http.get("/rows/103")
    assert plain.status_code == 200
    back = [h for h, t in links(plain.text).links if t.startswith("← back")]
    assert back == ["/?flag=disagree&page=2"]
    assert "meta-evaluator annotate" in plain.text and "/annotate/&lt;annotator id&gt;/2" in (
        plain.text
    )
    labelled = [h for h, t in links(linked.text).links if t.startswith("label as")]
    assert labelled == [f"http://127.0.0.1:9000/annotate/{a}/2" for a in ("ana", "ben", "chen")]
    assert "fraud" in plain.text  # every data column, shown or not


async def test_unknown_pages_and_rows_are_404(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        for url in ("/nothing", "/rows/999", "/rows", "/api/nothing", "/api/rows/1/2"):
            response = await http.get(url)
            assert response.status_code == 404, url
            if url.startswith("/api/"):
                assert "error" in response.json()


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("url", ["/", "/api/rows", "/rows/101", "/api/summary"])
async def test_the_viewer_only_reads(refusal: Path, method: str, url: str) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.request(method, url, data={"x": "1"})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


async def test_head_is_a_get_without_a_body(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        head = await http.head("/api/rows")
        get = await http.get("/api/rows")
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == len(get.content)


async def test_a_post_from_another_site_is_refused_before_anything(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.post("/api/rows", headers={"origin": "https://evil.example"})
    assert response.status_code == 403


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example:8765", "10.0.0.7:8765"]
)
@pytest.mark.parametrize("url", ["/", "/api/rows", "/rows/101"])
async def test_a_request_for_another_host_name_is_refused(
    refusal: Path, host: str, url: str
) -> None:
    """DNS rebinding: a site whose name resolves to 127.0.0.1 still sends its own name."""
    async with client(app_for(refusal)) as http:
        response = await http.get(url, headers={"host": host})
    assert response.status_code == 421
    if url.startswith("/api/"):
        assert "answers at 127.0.0.1" in response.json()["error"]
    else:
        assert "Wrong address" in response.text


@pytest.mark.parametrize("host", ["localhost:8765", "127.0.0.1:9000", "[::1]:8765", "localhost"])
async def test_loopback_names_are_served_at_any_port(refusal: Path, host: str) -> None:
    async with client(app_for(refusal)) as http:
        response = await http.get("/api/summary", headers={"host": host})
    assert response.status_code == 200


@pytest.mark.parametrize("url", ["/", "/api/rows", "/rows/101", "/summary", "/api/summary"])
async def test_with_a_token_every_route_needs_it(refusal: Path, url: str) -> None:
    async with client(app_for(refusal, token=TOKEN)) as http:
        refused = await http.get(url)
        wrong = await http.get(url, headers={"authorization": "Bearer nope"})
        bearer = await http.get(url, headers={"authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401 and wrong.status_code == 401
    assert TOKEN not in refused.text and "set-cookie" not in refused.headers
    assert bearer.status_code == 200


async def test_the_token_once_in_the_query_sets_the_viewers_own_cookie(refusal: Path) -> None:
    app = app_for(refusal, token=TOKEN)
    async with client(app) as http:
        first = await http.get(f"/?token={TOKEN}")
        cookie = first.headers["set-cookie"]
        later = await http.get("/api/summary")  # the client keeps the cookie, as a browser does
    assert first.status_code == 200
    assert cookie.startswith(f"meta_evaluator_view_token={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert later.status_code == 200
    async with client(app) as http:  # the annotation page's cookie is not the viewer's
        other = await http.get("/", headers={"cookie": f"meta_evaluator_token={TOKEN}"})
    assert other.status_code == 401


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20"])
async def test_a_public_bind_accepts_any_host_name_with_the_token(refusal: Path, host: str) -> None:
    app = app_for(refusal, host=host, port=8765, token=TOKEN)
    named: dict[str, Any] = {"host": "viewer.lab.example"}
    async with client(app, base=BASE) as http:
        served = await http.get(
            "/api/summary", headers={**named, "authorization": f"Bearer {TOKEN}"}
        )
        refused = await http.get("/api/summary", headers=named)
    assert served.status_code == 200 and refused.status_code == 401


async def test_flag_chips_toggle_and_cells_drop_the_flags(refusal: Path) -> None:
    async with client(app_for(refusal)) as http:
        page = await http.get("/", params={"judge": JUDGE, "flag": "invalid", "page": "1"})
    found = links(page.text).links
    chips = dict(re.findall(r"class='chip[^']*' href='([^']*)' data-flag='(\w+)'", page.text))
    by_flag = {
        flag: parse_qs(urlsplit(href.replace("&amp;", "&")).query) for href, flag in chips.items()
    }
    assert by_flag["invalid"].get("flag") is None  # on: clicked again, it is dropped
    assert by_flag["disagree"]["flag"] == ["invalid", "disagree"]
    cells = [parse_qs(urlsplit(h).query) for h, _ in found if "human_label=" in h]
    assert cells and all("flag" not in c and c["judge"] == [JUDGE] for c in cells)
