"""The response cache on its own (meta_evaluator/llm/cache.py): keys, the file, its failures."""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import stat
import sys
import time
from pathlib import Path

import httpx
import pytest

from meta_evaluator.errors import StorageError
from meta_evaluator.llm._http import compact_json
from meta_evaluator.llm.anthropic import AnthropicClient
from meta_evaluator.llm.cache import (
    CACHE_ENV,
    CACHE_FILE,
    RequestKeys,
    ResponseCache,
    default_cache_dir,
)
from meta_evaluator.llm.openai import OpenAIClient
from meta_evaluator.llm.types import ChatRequest, ChatResponse, OutputSchema

SCHEMA = OutputSchema("evaluation", {"type": "object", "properties": {"a": {"type": "string"}}})
ANSWER = ChatResponse('{"a": "x"}', {"a": "x"}, "stop", None, 12, 3)


def request(text: str = "Judge this", *, temperature: float | None = 0.0) -> ChatRequest:
    return ChatRequest("m", [{"role": "user", "content": text}], temperature, None, SCHEMA)


def keys(client: OpenAIClient | AnthropicClient | None = None, **headers: str) -> RequestKeys:
    client = client or OpenAIClient(httpx.AsyncClient(), base_url="http://llm.test/v1")
    return RequestKeys("openai", client.url("m"), headers, body=client.body)


def test_the_key_is_the_body_the_client_sends_and_its_place() -> None:
    openai = OpenAIClient(httpx.AsyncClient(), base_url="http://llm.test/v1")
    by = keys(openai)
    assert by.key(request()) == by.key(request())  # the same request, the same key
    assert by.key(request("other")) != by.key(request())  # any byte of the body counts
    assert by.key(request(temperature=0.7)) != by.key(request())
    assert by.key(request(), sample=1) != by.key(request()) != by.key(request(), sample=2)
    elsewhere = OpenAIClient(httpx.AsyncClient(), base_url="http://other.test/v1")
    assert keys(elsewhere).key(request()) != by.key(request())  # another endpoint
    assert keys(openai, **{"anthropic-beta": "x"}).key(request()) != by.key(request())
    anthropic = AnthropicClient(httpx.AsyncClient(), base_url="http://llm.test")
    assert keys(anthropic).key(request()) != by.key(request())
    # The body is hashed as sent: member by member encoding gives the client's exact bytes.
    for client in (openai, anthropic):
        maker = keys(client)
        for text in ("one", "two ü", "three"):
            body = client.body(request(text))
            assert maker._body_json(body).encode() == compact_json(body)


def test_an_answer_stored_is_found_by_a_later_process(tmp_path: Path) -> None:
    key = keys().key(request())
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        assert cache.get(key) is None
        cache.put(key, ANSWER)
        assert cache.get(key) == ANSWER  # buffered, not committed yet: still found
    again = ResponseCache.open(tmp_path)
    assert again is not None and again.get(key) == ANSWER and again.hits == 1
    again.close()
    assert (tmp_path / CACHE_FILE).is_file()


@pytest.mark.parametrize(
    ("error", "advice"),
    [
        ("attempt to write a readonly database", "Make the file and its folder writable"),
        ("database disk image is malformed", "If the file is damaged, delete it"),
    ],
)
def test_a_cache_that_cannot_write_says_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, error: str, advice: str
) -> None:
    """A read-only file is not called damaged (deleting a healthy cache would be wrong)."""
    cache = ResponseCache.open(tmp_path)
    assert cache is not None
    with caplog.at_level(logging.WARNING):
        cache._fail("write", sqlite3.OperationalError(error))
    assert advice in caplog.text and str(tmp_path / CACHE_FILE) in caplog.text
    assert cache.get(keys().key(request())) is None  # off for the rest of the run
    cache.close()


def test_writes_are_batched_and_committed_at_close(tmp_path: Path) -> None:
    cache = ResponseCache.open(tmp_path)
    assert cache is not None
    maker = keys()
    for i in range(10):
        cache.put(maker.key(request(str(i))), ANSWER)
    other = sqlite3.connect(tmp_path / CACHE_FILE)
    assert other.execute("SELECT count(*) FROM answers").fetchone()[0] == 0  # not yet
    cache.close()
    assert other.execute("SELECT count(*) FROM answers").fetchone()[0] == 10
    other.close()


def test_no_key_value_is_stored(tmp_path: Path) -> None:
    secret = "sk-test-DO-NOT-STORE-0123456789abcdef"
    client = OpenAIClient(httpx.AsyncClient(), base_url="http://llm.test/v1", api_key=secret)
    assert secret in str(client.headers)
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        cache.put(keys(client).key(request()), ANSWER)
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes(), path


def test_the_default_folder_follows_the_platform_and_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform not in ("win32", "darwin"):
        assert default_cache_dir() == tmp_path / "xdg" / "meta-evaluator"
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the spec says
        assert default_cache_dir() == Path.home() / ".cache" / "meta-evaluator"


def test_a_damaged_file_warns_once_and_the_run_goes_without(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not SQLite at all" * 100)
    with caplog.at_level(logging.WARNING):
        assert ResponseCache.open(tmp_path) is None
    assert "cannot be used" in caplog.text and str(tmp_path / CACHE_FILE) in caplog.text
    assert (tmp_path / CACHE_FILE).read_bytes().startswith(b"this is not")  # left as it was


def test_a_file_of_another_format_is_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    with sqlite3.connect(tmp_path / CACHE_FILE) as other:
        other.execute("PRAGMA user_version = 99")
    with caplog.at_level(logging.WARNING):
        assert ResponseCache.open(tmp_path) is None
    assert "format 99" in caplog.text


def test_an_entry_that_is_not_an_answer_is_a_miss(tmp_path: Path) -> None:
    key = keys().key(request())
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        cache.put(key, ANSWER)
    with sqlite3.connect(tmp_path / CACHE_FILE) as other:
        other.execute("UPDATE answers SET value = '[1, 2'")
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        assert cache.get(key) is None


def test_a_locked_file_delays_writes_and_never_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import meta_evaluator.llm.cache as module

    monkeypatch.setattr(module, "BUSY_TIMEOUT_MS", 50)  # the wait at close
    key = keys().key(request())
    cache = ResponseCache.open(tmp_path)
    assert cache is not None
    holder = sqlite3.connect(tmp_path / CACHE_FILE, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the timeout
    cache.put(key, ANSWER)
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        cache.flush()
        waited = time.monotonic() - started
    # A commit in the run blocks the event loop: it waits WRITE_BUSY_MS (50 ms), not a second.
    assert waited < 0.5, waited
    assert caplog.text == "" and cache.usable  # a lock now and then is ordinary: no warning
    assert cache.get(key) == ANSWER  # still buffered, still found
    monkeypatch.setattr(module, "FLUSH_SECONDS", 0.0)
    cache.put(keys().key(request("other")), ANSWER)  # before RETRY_LOCKED_SECONDS: no retry
    assert len(cache._pending) == 2
    with caplog.at_level(logging.WARNING):
        cache.flush()
        cache.flush()  # locked at three commits in a row: said once
        cache.flush()
    assert caplog.text.count("stays locked") == 1 and cache.usable
    holder.execute("ROLLBACK")
    cache.close()  # the lock is gone: stored now
    holder.close()
    with ResponseCache.open(tmp_path) as again:  # type: ignore[union-attr]
        assert again.get(key) == ANSWER and again.get(keys().key(request("other"))) == ANSWER


def _age(folder: Path, seconds: float) -> list[tuple[bytes, float]]:
    """Set every entry's last use `seconds` back; the (key, used) of each."""
    with sqlite3.connect(folder / CACHE_FILE) as db:
        db.execute("UPDATE answers SET used = used - ?", (seconds,))
    return _used(folder)


def _used(folder: Path) -> list[tuple[bytes, float]]:
    with sqlite3.connect(folder / CACHE_FILE) as db:
        return db.execute("SELECT key, used FROM answers ORDER BY id").fetchall()


def _files(folder: Path) -> dict[str, bytes]:
    """The cache's files, but -shm: SQLite's shared lock memory, which every reader writes."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.endswith("-shm")}


def test_a_read_only_cache_never_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dry run the day after a run: its hits (on entries last used 2 h ago, past
    TOUCH_SECONDS) are not recorded, nothing is committed nor evicted, no warning."""
    import meta_evaluator.llm.cache as module

    maker = keys()
    stored = [maker.key(request(str(i))) for i in range(20)]
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        for key in stored:
            cache.put(key, ANSWER)
    before = _age(tmp_path, 7200)
    files = _files(tmp_path)
    monkeypatch.setattr(module, "FLUSH_SECONDS", 0.0)  # any flush would be due at once
    monkeypatch.setattr(module, "EVICT_ROWS", 1)
    with caplog.at_level(logging.DEBUG, logger="meta_evaluator.llm.cache"):
        peek = ResponseCache.peek(tmp_path)
        assert peek is not None and peek.read_only
        peek.max_bytes = 1  # even far past its bound, a read-only cache deletes nothing
        for key in stored:
            assert peek.get(key) == ANSWER
        peek.put(maker.key(request("new")), ANSWER)  # stores nothing
        assert peek.get(maker.key(request("new"))) is None
        peek.flush()
        assert peek.usable and peek.hits == 20
        peek.close()
    assert caplog.text == ""
    assert _used(tmp_path) == before  # no hit refreshed its entry's time
    assert _files(tmp_path) == files  # not a byte written
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        assert all(cache.get(key) == ANSWER for key in stored)  # a later run still finds all


def test_a_hit_refreshes_an_old_entry_in_a_run(tmp_path: Path) -> None:
    key = keys().key(request())
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        cache.put(key, ANSWER)
    [(_, old)] = _age(tmp_path, 7200)
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        assert cache.get(key) == ANSWER
    [(_, used)] = _used(tmp_path)
    assert used > old + 7000


def test_eviction_deletes_in_bounded_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No commit deletes more than EVICT_ROWS entries; the steps go on at later commits (and at
    close) until the file is down to nine tenths of its bound."""
    import meta_evaluator.llm.cache as module

    maker = keys()
    big = ChatResponse("x" * 1500, None, "stop", None, 1, 1)
    with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
        for i in range(400):  # about 0.8 MB
            cache.put(maker.key(request(f"row {i}")), big)
    monkeypatch.setattr(module, "EVICT_ROWS", 10)
    cache = ResponseCache.open(tmp_path, max_mb=0.4)  # a bound lowered: half of it must go
    assert cache is not None
    counts = [len(_used(tmp_path))]
    for i in range(5):
        cache.put(maker.key(request(f"new {i}")), big)
        cache.flush()
        counts.append(len(_used(tmp_path)))
    assert all(0 < a + 1 - b <= 10 for a, b in itertools.pairwise(counts)), counts
    cache.close()  # the rest of the steps, the run's calls being over
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    assert pages * size <= 0.4 * 1_000_000 + 8 * size
    assert 100 < len(_used(tmp_path)) < 200


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_a_folder_and_file_the_cache_makes_are_private(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    old_umask = os.umask(0o022)  # the usual default: files readable by all
    try:
        folder = tmp_path / "made" / "cache"
        with ResponseCache.open(folder) as cache:  # type: ignore[union-attr]
            cache.put(keys().key(request()), ANSWER)
            cache.flush()
            for name in (CACHE_FILE, CACHE_FILE + "-wal", CACHE_FILE + "-shm"):
                assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        # A folder that exists keeps its mode (the user chose it); the file made is private.
        with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
            pass
        assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
        assert stat.S_IMODE((tmp_path / CACHE_FILE).stat().st_mode) == 0o600
        # A file that exists keeps its mode too.
        (tmp_path / CACHE_FILE).chmod(0o640)
        with ResponseCache.open(tmp_path) as cache:  # type: ignore[union-attr]
            pass
        assert stat.S_IMODE((tmp_path / CACHE_FILE).stat().st_mode) == 0o640
    finally:
        os.umask(old_umask)


def test_eviction_keeps_the_size_bound_and_the_recent_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import meta_evaluator.llm.cache as module

    monkeypatch.setattr(module, "TOUCH_SECONDS", 0.0)  # every hit refreshes its entry
    maker = keys()
    bound_mb = 0.4
    big = ChatResponse("x" * 1500, None, "stop", None, 1, 1)  # two to a page of the file
    first = maker.key(request("row 0"))
    with ResponseCache.open(tmp_path, max_mb=bound_mb) as cache:  # type: ignore[union-attr]
        for i in range(400):  # about 0.8 MB of answers
            cache.put(maker.key(request(f"row {i}")), big)
            if i % 50 == 49:
                cache.flush()
                assert cache.get(first) is not None  # used again and again: kept
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
        kept = db.execute("SELECT count(*) FROM answers").fetchone()[0]
    assert pages * size <= bound_mb * 1_000_000 + 8 * size  # the file itself stays bounded
    assert 100 < kept < 200
    with ResponseCache.open(tmp_path, max_mb=bound_mb) as cache:  # type: ignore[union-attr]
        assert cache.get(first) is not None  # the least recently used went, not the oldest
        assert cache.get(maker.key(request("row 399"))) is not None  # the newest stay
        assert cache.get(maker.key(request("row 1"))) is None  # the others of the first went


def test_a_named_folder_that_cannot_be_made_is_an_error_the_default_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a folder")
    with pytest.raises(StorageError) as caught:
        ResponseCache.open(in_the_way / "cache")
    assert caught.value.path == in_the_way / "cache" and "cache_dir" in str(caught.value)
    monkeypatch.setenv(CACHE_ENV, str(in_the_way / "cache"))  # named by the variable: the same
    with pytest.raises(StorageError):
        ResponseCache.open()
    monkeypatch.delenv(CACHE_ENV)  # the default folder: a warning, and no cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(in_the_way))
    monkeypatch.setenv("HOME", str(in_the_way))
    monkeypatch.setenv("LOCALAPPDATA", str(in_the_way))
    with caplog.at_level(logging.WARNING):
        assert ResponseCache.open() is None
    assert "goes without the cache" in caplog.text
