"""A response cache across runs: a request sent before, byte for byte, reuses its stored answer.

What is stored: the answer a live call received, as the client parsed it (`ChatResponse`: text,
structured object, finish reason, refusal, token counts), under a key. Failures (errors,
timeouts) are never stored. A new run, another run id or another project on the same machine
that sends an identical request gets the stored answer without a call: no HTTP request, no
rate-limit budget, nothing to pay.

The key is the SHA-256 of the client kind (`openai`, `azure_openai`, `anthropic`), the request
URL (for Azure: deployment and `api-version`), the judge's `extra_headers` (they may change the
answer, and never hold credentials: `Judge` refuses those), the exact JSON body the client
sends (model, messages, sampling settings, output schema), and, for the second and later
answers of a row asked several times (`consistency`), the sample's number, so that k samples
are never one answer repeated. The credential headers (`Authorization`, `api-key`,
`x-api-key`) are not part of the key and nothing of them is stored: the file holds digests and
answers, no key.

Where: one SQLite file, `responses.sqlite3`, in the cache folder (`default_cache_dir`:
`$META_EVALUATOR_CACHE_DIR`, else the platform's user cache folder + `meta-evaluator`).

Concurrency: the file is in WAL mode, so any number of processes read it while one writes.
Writes are buffered and committed in one transaction per `FLUSH_ROWS` answers or
`FLUSH_SECONDS` (checked at each lookup and store), and at `close` (the runner closes the
cache when the run ends, is stopped or fails). A commit runs on the caller's thread (the
event loop), so it is kept short: it waits at most `WRITE_BUSY_MS` for another process's
write lock, else keeps its answers buffered for a commit `RETRY_LOCKED_SECONDS` later, and an
eviction deletes at most `EVICT_ROWS` entries per commit. A transaction holds whole entries or
none, so no process ever reads a half-written entry. Two processes asking the same rows at the
same time may both pay for a row: a process reuses another's answer only when that answer was
committed before it looked the row up (see docs/judges-and-endpoints.md, "The response cache").

Size: the live pages of the file are kept under `max_bytes`; past it, the least recently used
entries are deleted, `EVICT_ROWS` at a time, down to nine tenths of it (a hit refreshes an
entry's time, at most once an hour) and the freed pages returned to the file system.

Read-only (`ResponseCache.peek`, for a dry run): lookups only; it records no use, stores and
deletes nothing, and never writes to the file.

Permissions: a cache folder the cache creates is private to the user (0o700), and so is a
cache file it creates (0o600; SQLite gives its `-wal`, `-shm` files the file's mode): answers
may hold user data. An existing folder's mode is left alone.

Failures never stop a run: a damaged or foreign file, a file another process keeps locked, a
full disk, each is said once in a warning and the run goes on without the cache (or, for a
lock at commit time, tries again later). Only a cache folder the user named that cannot be
created or written is an error (`ResponseCache.open`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from meta_evaluator.llm.types import ChatRequest, ChatResponse
from meta_evaluator.storage import os_error

__all__ = [
    "CACHE_ENV",
    "CACHE_FILE",
    "DEFAULT_MAX_MB",
    "RequestKeys",
    "ResponseCache",
    "default_cache_dir",
]

logger = logging.getLogger(__name__)

CACHE_ENV = "META_EVALUATOR_CACHE_DIR"
"""The environment variable naming the cache folder (wins over the platform's default)."""

CACHE_FILE = "responses.sqlite3"
"""The cache's one file, in the cache folder (SQLite adds `-wal` and `-shm` beside it)."""

DEFAULT_MAX_MB = 1024.0
"""The default size bound of the cache file, in MB (10**6 bytes)."""

FLUSH_ROWS = 100
"""Answers buffered before they are committed in one transaction."""

FLUSH_SECONDS = 0.5
"""Most seconds an answer waits in the buffer (checked at each lookup and store)."""

BUSY_TIMEOUT_MS = 1000
"""Milliseconds SQLite waits for another process's lock when opening and closing the cache."""

WRITE_BUSY_MS = 50
"""Milliseconds a commit during the run waits for another process's write lock: it runs on the
event loop, and every call in flight waits with it."""

RETRY_LOCKED_SECONDS = 5.0
"""After a commit found the file locked for `WRITE_BUSY_MS`, seconds before trying again."""

EVICT_ROWS = 500
"""Most entries one commit deletes when the file is past its bound (each costs a few us; the
rest go at the next commits)."""

CLOSE_EVICT_SECONDS = 2.0
"""At `close`, most seconds spent on eviction steps still due (the run's calls are over)."""

_ROW_OVERHEAD = 100
"""Bytes an entry takes besides its answer: key, time, row header, its two index entries."""

TOUCH_SECONDS = 3600.0
"""A hit refreshes its entry's last-use time when it is older than this (saves writes)."""

_FORMAT = b"meta-evaluator response cache 1\0"
"""Starts every key: a new format gives new keys instead of misreading old entries."""

_REASONS = frozenset(("stop", "length", "refusal", "other"))
"""The finish reasons (`types.FinishReason`) a stored answer may have."""

_FILE_VERSION = 1
"""The file's `user_version`: a file of another version is not read (nor changed)."""

# Answers are appended in rowid order and found through the index on `key`: with random keys,
# a table keyed by them (WITHOUT ROWID) dirties a whole page per new answer, and costs 2.5
# times as much CPU per stored answer (measured: 30 against 12 us).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY,
    key BLOB NOT NULL UNIQUE,
    value TEXT NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_used ON answers (used);
"""

# One encoder for every key: json.dumps(..., separators=...) builds a new one per call, which
# costs as much as the encoding. The same bytes as `_http.compact_json`, what clients send.
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def default_cache_dir() -> Path:
    """The cache folder: `$META_EVALUATOR_CACHE_DIR`, else the user cache folder's.

    The user cache folder is `%LOCALAPPDATA%` on Windows, `~/Library/Caches` on macOS, and
    `$XDG_CACHE_HOME` (when it is an absolute path) or `~/.cache` elsewhere; meta-evaluator's
    is `meta-evaluator` inside it.
    """
    named = os.environ.get(CACHE_ENV)
    if named:
        return Path(named).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        root = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        root = home / "Library" / "Caches"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        root = Path(xdg) if os.path.isabs(xdg) else home / ".cache"
    return root / "meta-evaluator"


class RequestKeys:
    """The cache keys of one judge's requests: what its requests share is hashed once.

    `body` is the client's own `body` method, so the key covers the exact JSON it sends.

    Example:
        >>> from meta_evaluator.llm.types import ChatRequest
        >>> keys = RequestKeys(
        ...     "openai", "http://127.0.0.1:8000/v1/chat/completions", {},
        ...     body=lambda r: {"model": r.model, "messages": r.messages},
        ... )
        >>> request = ChatRequest("m", [{"role": "user", "content": "Hi"}])
        >>> keys.key(request) == keys.key(request) != keys.key(request, sample=1)
        True
    """

    def __init__(
        self,
        client: str,
        url: str,
        extra_headers: Mapping[str, str],
        *,
        body: Callable[[ChatRequest], Mapping[str, Any]],
    ) -> None:
        """Hash the client kind, the URL and the judge's extra headers (names lower-cased)."""
        shared = [client, url, sorted((k.lower(), v) for k, v in extra_headers.items())]
        self._prefix = hashlib.sha256(_FORMAT + _compact_json(shared).encode() + b"\0")
        self._body = body
        self._last: dict[str, tuple[Any, str]] = {}

    def _body_json(self, body: Mapping[str, Any]) -> str:
        """`body` as compact JSON, byte for byte as the client sends it.

        A member equal to the previous body's (the model, the output schema: the same for
        every row of a judge) reuses its encoding: the schema alone costs half of the key.
        """
        last = self._last
        parts = []
        for name, value in body.items():
            seen = last.get(name)
            if seen is not None and seen[0] == value:
                text = seen[1]
            else:
                text = _compact_json(value)
                last[name] = (value, text)
            parts.append(f"{_compact_json(name)}:{text}")
        return "{" + ",".join(parts) + "}"

    def key(self, request: ChatRequest, sample: int = 0) -> bytes:
        """The key of `request`, for its answer number `sample` (0-based) of the row.

        Sample 0 (a row asked once, or the first of several answers) has no number in the
        key, so its answer serves a later run asking the row once or several times alike.
        """
        digest = self._prefix.copy()
        digest.update(self._body_json(self._body(request)).encode())
        if sample:
            digest.update(b"\0sample %d" % sample)
        return digest.digest()


class ResponseCache:
    """Stored answers in one SQLite file, shared by every run and process on the machine.

    Open it with `ResponseCache.open` (None when it cannot be used), look answers up with
    `get`, store new ones with `put`, and `close` it at the end of the run: that commits the
    answers still buffered. Not thread-safe: one event loop uses it.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        *,
        max_bytes: int,
        read_only: bool = False,
    ) -> None:
        """Use an open connection (see `open`, and `peek` for `read_only`)."""
        self.path = path
        """The cache file."""
        self.max_bytes = max_bytes
        """The most bytes of live pages the file keeps; past it, the oldest entries go."""
        self.read_only = read_only
        """Lookups only: no use is recorded, `put` stores nothing, nothing is written."""
        self.hits = 0
        """Lookups answered from the cache."""
        self.stored = 0
        """Answers committed to the file by this object."""
        self._db: sqlite3.Connection | None = connection
        self._pending: dict[bytes, str] = {}
        self._touched: dict[bytes, float] = {}
        self._oldest = 0.0
        self._retry_at = 0.0
        self._locked = 0  # commits in a row that found the file locked
        self._shrinking = False  # past the bound: evicting, a step per commit, to 9/10 of it
        self._freed = False  # entries were deleted: `close` returns the free pages to the disk
        self._warned = False

    @classmethod
    def open(
        cls, directory: str | Path | None = None, *, max_mb: float = DEFAULT_MAX_MB
    ) -> ResponseCache | None:
        """The cache in `directory` (created if need be); None, with a warning, if unusable.

        Args:
            directory: The cache folder; None: `default_cache_dir()`.
            max_mb: The size bound of the file, in MB.

        Returns:
            The open cache; None when the file cannot be used (damaged or foreign, kept locked
            by another process), or the default folder cannot be created or written: the run
            goes on without the cache, said once in a warning.

        Raises:
            StorageError: A folder the user named (`directory`, or `$META_EVALUATOR_CACHE_DIR`)
                cannot be created or written (`PermissionDeniedError`, `DiskFullError` ...);
                the message names it.
        """
        named = directory is not None or bool(os.environ.get(CACHE_ENV))
        folder = Path(directory).expanduser() if directory is not None else default_cache_dir()
        path = folder / CACHE_FILE
        try:
            # Answers may hold user data: a folder (and file) made here is the user's alone.
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not os.access(folder, os.W_OK | os.X_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))
        except OSError as exc:
            if named:
                error = os_error(folder, exc, "create or write the response cache folder")
                raise type(error)(
                    f"{error.message.rstrip('.')}. Name another folder with cache_dir "
                    "(--cache-dir) or $META_EVALUATOR_CACHE_DIR, or run without the cache "
                    "(cache=False, --no-cache).",
                    path=folder,
                ) from exc
            logger.warning(
                "response cache folder %s cannot be created or written (%s); this run goes "
                "without the cache (name another with cache_dir / --cache-dir)",
                folder,
                exc,
            )
            return None
        try:
            with contextlib.suppress(FileExistsError):  # SQLite makes -wal, -shm alike
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            logger.warning(
                "response cache %s cannot be opened (%s); this run goes without it", path, exc
            )
            return None
        try:
            connection.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only before the first table
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot use WAL mode (journal mode {mode})")
            connection.execute("PRAGMA synchronous = NORMAL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _FILE_VERSION):
                raise sqlite3.DatabaseError(
                    f"it is of format {version}, made by another version of meta-evaluator "
                    f"(this one reads format {_FILE_VERSION}); name another folder with cache_dir"
                )
            connection.executescript(_SCHEMA)
            if version == 0:
                connection.execute(f"PRAGMA user_version = {_FILE_VERSION}")
            connection.execute(f"PRAGMA busy_timeout = {WRITE_BUSY_MS}")  # commits in the run
        except sqlite3.Error as exc:
            connection.close()
            logger.warning(
                "response cache %s cannot be used (%s: %s); this run goes without it. If the "
                "file is damaged, delete it (and its -wal, -shm files) to start a new cache.",
                path,
                type(exc).__name__,
                exc,
            )
            return None
        return cls(connection, path, max_bytes=int(max_mb * 1_000_000))

    @classmethod
    def peek(cls, directory: str | Path | None = None) -> ResponseCache | None:
        """The cache in `directory`, opened read-only (a dry run counts its answers).

        Creates nothing and writes nothing: a hit does not refresh its entry's time (a dry run
        does not use the answer), `put` stores nothing, `flush` and `close` commit and evict
        nothing. None when there is no cache file, or it cannot be read (the run will say why).
        """
        folder = Path(directory).expanduser() if directory is not None else default_cache_dir()
        path = folder / CACHE_FILE
        if not path.is_file():
            return None
        try:
            connection = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro",
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version != _FILE_VERSION:
                connection.close()
                return None
            connection.execute("SELECT 1 FROM answers LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            logger.debug("response cache %s cannot be read: %s", path, exc)
            return None
        return cls(connection, path, max_bytes=int(DEFAULT_MAX_MB * 1_000_000), read_only=True)

    @property
    def usable(self) -> bool:
        """Whether the cache is still in use (a failure of the file turns it off for the run)."""
        return self._db is not None

    def get(self, key: bytes) -> ChatResponse | None:
        """The answer stored under `key`, or None (not stored, or the cache is off)."""
        db = self._db
        if db is None:
            return None
        value = self._pending.get(key)
        if value is None:
            try:
                found = db.execute("SELECT value, used FROM answers WHERE key = ?", (key,))
                row = found.fetchone()
            except sqlite3.Error as exc:
                self._fail("read", exc)
                return None
            if row is None:
                self._maybe_flush()
                return None
            value, used = row
            now = time.time()
            if now - used > TOUCH_SECONDS and not self.read_only:
                self._touched[key] = now
                self._oldest = self._oldest or time.monotonic()
        response = _decode(value)
        if response is not None:
            self.hits += 1
        self._maybe_flush()
        return response

    def put(self, key: bytes, response: ChatResponse) -> None:
        """Store `response` under `key` (committed with the next batch, or at `close`).

        Read-only (`peek`): stores nothing.
        """
        if self._db is None or self.read_only:
            return
        self._pending[key] = _encode(response)
        self._oldest = self._oldest or time.monotonic()
        self._maybe_flush()

    def flush(self) -> None:
        """Commit the buffered answers (and refreshed times) in one transaction, then evict.

        A file locked by another process for `WRITE_BUSY_MS` keeps them buffered, for the
        next flush after `RETRY_LOCKED_SECONDS`; any other failure turns the cache off.
        Eviction deletes at most `EVICT_ROWS` entries per flush. Read-only: does nothing.
        """
        db = self._db
        if db is None or self.read_only or not (self._pending or self._touched or self._shrinking):
            return
        now = time.time()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO answers (key, value, used) VALUES (?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value, used = excluded.used",
                    [(k, v, now) for k, v in self._pending.items()],
                )
                db.executemany(
                    "UPDATE answers SET used = ? WHERE key = ?",
                    [(used, k) for k, used in self._touched.items()],
                )
                evicted = self._evict(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                self._retry_at = time.monotonic() + RETRY_LOCKED_SECONDS
                self._locked += 1
                # Another process committing (or checkpointing) now and then is ordinary: said
                # only when the file stays locked over the retries.
                logger.debug("response cache %s is locked (%s): retried later", self.path, exc)
                if self._locked >= 3:
                    self._warn_once(
                        "response cache %s stays locked by another process (%s); %d answers "
                        "wait to be stored",
                        self.path,
                        exc,
                        len(self._pending),
                    )
                return
            self._fail("write", exc)
            return
        except sqlite3.Error as exc:
            self._fail("write", exc)
            return
        self.stored += len(self._pending)
        self._pending.clear()
        self._touched.clear()
        self._oldest = 0.0
        self._locked = 0
        if evicted:
            # The freed pages are reused by the next answers stored; what is left of them goes
            # back to the disk at `close` (moving pages here would make the commit slower).
            self._freed = True

    def close(self) -> None:
        """Commit what is buffered and close the file (at the end of a run, also a stopped one).

        The run's calls are over: this commit waits up to `BUSY_TIMEOUT_MS` for a lock, and
        an eviction under way goes on, step by step, for up to `CLOSE_EVICT_SECONDS`.
        Answers that still cannot be stored (the file stays locked) are dropped, said once.
        A read-only cache (`peek`) is only closed.
        """
        if self._db is None:
            return
        if not self.read_only:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._retry_at = 0.0
            self.flush()
            deadline = time.monotonic() + CLOSE_EVICT_SECONDS
            while self._shrinking and self._db is not None and time.monotonic() < deadline:
                before = self._locked
                self.flush()
                if self._locked > before:
                    break
            if self._freed and self._db is not None:
                try:
                    # The free pages go back to the disk. (Through `execute`, the pragma
                    # frees one page: Python steps a statement without result rows once.)
                    self._db.executescript("PRAGMA incremental_vacuum;")
                except sqlite3.Error as exc:  # only space is lost; the entries are gone already
                    logger.debug("response cache %s: incremental_vacuum failed: %s", self.path, exc)
            if self._pending and self._db is not None:
                logger.warning(
                    "response cache %s: %d answers were not stored (the file stayed locked)",
                    self.path,
                    len(self._pending),
                )
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _maybe_flush(self) -> None:
        if not self._oldest:
            return
        now = time.monotonic()
        if now < self._retry_at:
            return
        if len(self._pending) >= FLUSH_ROWS or now - self._oldest >= FLUSH_SECONDS:
            self.flush()

    def _evict(self, db: sqlite3.Connection) -> int:
        """Past `max_bytes` of live pages, delete least recently used entries: one bounded step.

        Once past the bound, each flush deletes up to `EVICT_ROWS` entries (the least recently
        used; about as many bytes as remain above nine tenths of the bound) until the live
        pages are down to nine tenths of it: eviction comes once per tenth of the bound
        written, and no one commit deletes more than `EVICT_ROWS`. Runs inside the flush's
        transaction; returns the entries deleted.
        """
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        live = (pages - free) * page
        if live > self.max_bytes:
            self._shrinking = True
        target = self.max_bytes * 0.9
        if not self._shrinking or live <= target:
            self._shrinking = False
            return 0
        # The candidates in eviction order, each with about the bytes it holds, as many as make
        # up the excess (no count of the table: that reads the whole index). An entry holds a
        # little more than this (page slack), so a step may free somewhat more than the excess:
        # the file ends a few hundredths of the bound below nine tenths; a step that frees too
        # little is followed by another.
        excess, drop = live - target, 0
        for (size,) in db.execute(
            "SELECT length(CAST(value AS BLOB)) FROM answers ORDER BY used, id LIMIT ?",
            (EVICT_ROWS,),
        ):
            drop += 1
            excess -= size + _ROW_OVERHEAD
            if excess <= 0:
                break
        if drop == 0:  # nothing left to delete
            self._shrinking = False
            return 0
        db.execute(
            "DELETE FROM answers WHERE id IN (SELECT id FROM answers ORDER BY used, id LIMIT ?)",
            (drop,),
        )
        return drop

    def _fail(self, action: str, exc: sqlite3.Error) -> None:
        """Turn the cache off for the rest of the run, saying why once."""
        if "readonly" in str(exc).replace("-", "").replace(" ", "").lower():
            advice = "Make the file and its folder writable, or run with --cache-dir elsewhere."
        else:
            advice = "If the file is damaged, delete it (and its -wal, -shm files) to start anew."
        logger.warning(
            "response cache %s cannot %s (%s: %s); the rest of this run goes without it. %s",
            self.path,
            action,
            type(exc).__name__,
            exc,
            advice,
        )
        self._warned = True
        db, self._db = self._db, None
        self._pending.clear()
        if db is not None:
            with contextlib.suppress(sqlite3.Error):  # a damaged file: nothing more to do
                db.close()

    def _warn_once(self, message: str, *args: object) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(message, *args)


def _encode(response: ChatResponse) -> str:
    """The answer as compact JSON: [text, structured, finish_reason, refusal, tokens...]."""
    return _compact_json(
        [
            response.text,
            response.structured,
            response.finish_reason,
            response.refusal,
            response.prompt_tokens,
            response.completion_tokens,
        ]
    )


def _decode(value: str) -> ChatResponse | None:
    """The answer stored as `value`; None for one that is not what `_encode` writes."""
    try:
        text, structured, reason, refusal, prompt, completion = json.loads(value)
    except (ValueError, TypeError):  # not JSON, not a list of six
        return None
    if (
        type(text) is str
        and (structured is None or type(structured) is dict)
        and reason in _REASONS
        and (refusal is None or type(refusal) is str)
        and (prompt is None or type(prompt) is int)
        and (completion is None or type(completion) is int)
    ):
        return ChatResponse(text, structured, reason, refusal, prompt, completion)
    return None
