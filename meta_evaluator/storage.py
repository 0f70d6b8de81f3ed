"""Files on disk: atomic writes, JSON/YAML/Parquet helpers and safe names.

Every file meta-evaluator writes goes through `atomic_write`: the content is written to a
temporary file in the same folder, flushed and fsynced, then moved over the target with
`os.replace`, and the folder is fsynced. A reader therefore sees the old file or the new one,
never a half-written one, even if the process is killed mid-write. The trade-offs: a write costs
two fsyncs (slow on some network file systems), and a killed process may leave a hidden
`.<name>.*.tmp` file behind, which is harmless: nothing reads it, and it is never removed
automatically because another process may be writing it.

A write the file system refuses raises the typed error of `os_error` naming the file
(`DiskFullError`, `PermissionDeniedError`; exit 4 on the command line), and so does one that
polars reports from under its writers, where the `errno` survives only in the message
(`io_errno`). The readers `read_json` and `read_yaml` refuse lists and mappings nested more
than `MAX_DEPTH` levels deep as malformed, so no file can exhaust Python's recursion.

No write leaves the project through a symbolic link: before a file is written (and before its
folders are created), `check_inside_project` refuses a path whose real location is outside its
project folder. The real location is the path as given with every link followed component by
component, as the operating system will follow them (so `results/link/../x` is where `link`
points, not `results/x`). The project folder is the `root` the writer passes (a `MetaEvaluator`
passes its own when it saves, and checks its folders against it before any write, so the first
save, before `main_state.json` exists, is checked too); without one, it is the nearest folder
above the path holding `main_state.json`, and a path in no project (`report --output`) is
written as given. The check happens before the write: a link
swapped in by another process in between is not caught (the row file's and the lock files' own
names excepted, which `judge/row_store.py` and `locks.py` open with `O_NOFOLLOW`).

Names derived from user-supplied ids (judge ids, annotator ids, run ids) must be one safe path
component; `check_safe_name` enforces it before any path is built.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import errno
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from meta_evaluator._safe_parse import MAX_DEPTH, parse_json, parse_yaml
from meta_evaluator._util import shown
from meta_evaluator.api_keys import looks_like_key
from meta_evaluator.errors import (
    DiskFullError,
    LfsPointerError,
    MetaEvaluatorError,
    OutsideProjectError,
    PermissionDeniedError,
    StorageError,
    UnsafeNameError,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "MAX_DEPTH",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_inside_project",
    "check_lfs_pointer",
    "check_safe_name",
    "fsync_folder",
    "io_errno",
    "os_error",
    "path_argument",
    "raise_problems",
    "read_json",
    "read_yaml",
    "read_yaml_list",
    "removed_on_error",
    "sha256",
    "write_csv",
    "write_json",
    "write_parquet",
    "write_yaml",
    "yaml_mapping",
]

_TMP_SUFFIX = ".tmp"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_MAX_NAME_LENGTH = 128
# Names Windows refuses as files, whatever the extension: refuse them everywhere so a project
# folder under version control checks out on every system.
_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{i}" for i in range(1, 10)]
    + [f"LPT{i}" for i in range(1, 10)]
)


def check_safe_name(name: object, *, field: str) -> str:
    """Return `name` if it is one safe path component, else raise `UnsafeNameError`.

    Safe means: a string of 1 to 128 characters from letters, digits, `_`, `-` and `.`, starting
    with a letter or digit, not ending with `.`, and not a name Windows reserves (`CON`, `NUL` ...).

    Args:
        name: The user-supplied id.
        field: What the id is, for the message (`"judge_id"`, `"annotator_id"`).
    """
    if not isinstance(name, str):
        raise UnsafeNameError(
            f"{field} must be a string, got {type(name).__name__} {shown(name)}.", field=field
        )
    problem = None
    if not name:
        problem = "is empty"
    elif len(name) > _MAX_NAME_LENGTH:
        problem = f"is {len(name)} characters long (at most {_MAX_NAME_LENGTH})"
    elif not _SAFE_NAME.fullmatch(name):
        problem = (
            "is not a safe file name: use letters, digits, '_', '-' and '.', "
            "starting with a letter or digit"
        )
    elif name.endswith("."):
        problem = "ends with '.'"
    elif name.split(".")[0].upper() in _WINDOWS_RESERVED:
        problem = "is a name Windows reserves for devices"
    elif looks_like_key(name):  # a file name is shown in every listing: never a key
        raise UnsafeNameError(
            f"{field} looks like an API key; it would name a file in the project folder and be "
            "shown by status. Choose a plain id, and keep keys in environment variables.",
            field=field,
        )
    if problem:
        raise UnsafeNameError(
            f"{field} {shown(name)} {problem}; it names a file in the project folder, so choose "
            f"another id (for example {_suggest_name(name)!r}).",
            field=field,
        )
    return name


_DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)})
_NO_PERMISSION = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


# How polars reports the OSError under its writers: the errno only survives in the text, as
# Rust's "No space left on device (os error 28)" or Python's "[Errno 28] No space left ...".
_ERRNO_IN_TEXT = re.compile(r"\(os error (\d+)\)|\[Errno (\d+)\]")


def io_errno(exc: BaseException) -> int | None:
    """The `errno` of an I/O failure: an `OSError`'s own, else the one named in its text.

    polars raises a `ComputeError` (Parquet) or an `OSError` without `errno` (CSV, JSON) when
    the file under it refuses a write, naming the code only in the message; for any other
    exception, None (a bug is not an I/O failure, and is never translated).
    """
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    if not isinstance(exc, OSError) and not type(exc).__module__.startswith("polars"):
        return None
    match = _ERRNO_IN_TEXT.search(str(exc))
    return int(match[1] or match[2]) if match else None


def os_error(
    path: str | Path, exc: Exception, action: str = "write", *, kept: str | None = None
) -> StorageError:
    """The typed error for an I/O failure met while `action` ("write", "read") on `path`.

    A full disk or quota becomes `DiskFullError`, missing permission or a read-only file system
    `PermissionDeniedError`, anything else `StorageError`; each names the path, keeps the
    `errno` (`io_errno`: also the one polars names only in its message), and says how to fix
    it; `kept`, when the caller knows, says what is safe (`Rows already saved are kept.`).
    The caller raises it `from exc`.
    """
    target = Path(path)
    code = io_errno(exc)
    name = errno.errorcode.get(code, "") if code is not None else ""
    strerror = getattr(exc, "strerror", None) or (os.strerror(code) if code else str(exc))
    cause = f"{strerror}{f', {name}' if name else ''}"
    after = f" {kept}" if kept else ""
    error: StorageError
    if code in _DISK_FULL:
        error = DiskFullError(
            f"{target}: cannot {action}: the disk or your quota is full ({cause}); free space "
            f"there and run again. Files are never half-written.{after}",
            path=target,
        )
    elif code == errno.EROFS:
        error = PermissionDeniedError(
            f"{target}: cannot {action}: the file system is read-only ({cause}); remount it "
            f"writable or move the project, then run again.{after}",
            path=target,
        )
    elif code in _NO_PERMISSION:
        error = PermissionDeniedError(
            f"{target}: cannot {action}: permission denied ({cause}); give your user access "
            f"to it (chmod/chown) or run as its owner, then run again.{after}",
            path=target,
        )
    else:
        error = StorageError(f"{target}: cannot {action} ({cause}).", path=target)
    error.errno = code
    return error


def _suggest_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")
    if not cleaned or cleaned.split(".")[0].upper() in _WINDOWS_RESERVED:
        cleaned = f"id_{cleaned}"
    return cleaned[:_MAX_NAME_LENGTH].rstrip("._-") or "id"


_LFS_POINTER = b"version https://git-lfs"


def check_lfs_pointer(path: str | Path, head: bytes | None = None) -> None:
    """Raise `LfsPointerError` if the file is a git-lfs pointer instead of its content.

    A repository cloned without git-lfs holds, in place of each large file, three lines starting
    `version https://git-lfs.github.com/spec/v1`. Every reader of data, results and annotations
    calls this first, so the message says to run `git lfs pull` instead of "not Parquet".

    Args:
        path: The file about to be read; one that cannot be opened is left to the reader.
        head: The file's first bytes, when the caller has read them already.
    """
    target = Path(path)
    if head is None:
        try:
            with target.open("rb") as handle:
                head = handle.read(len(_LFS_POINTER))
        except OSError:
            return
    if head.startswith(_LFS_POINTER):
        raise LfsPointerError(
            f"{target}: is a git-lfs pointer, not the file's content: the repository was cloned "
            "without its large files. Run `git lfs pull` in the repository (after `git lfs "
            "install` if git-lfs is new on this machine), then try again.",
            path=target,
        )


PROJECT_MARKER = "main_state.json"  # the file that makes a folder a project (_state.STATE_FILE)


def check_inside_project(path: str | Path, *, root: str | Path | None = None) -> None:
    """Raise `OutsideProjectError` if writing `path` would land outside its project folder.

    The path's real location is `os.path.realpath` of the path as given: each component in
    turn, a link followed before a later `..` applies, as the operating system will (the file's
    own link included). It must be inside the project's real location.

    Args:
        path: The file or folder about to be written.
        root: The project folder. Without it, the project is the nearest folder above `path`
            (lexically, `..` collapsed, no link followed) holding `main_state.json`; one that is
            itself a symlink counts only when no other is found, so a `results/` linked into
            another project is still caught; a path in no project is not checked.

    Raises:
        OutsideProjectError: A folder or file on the way is a symlink pointing outside.
    """
    if root is None:
        root = _project_root(Path(os.path.abspath(path)))  # only to find the project
        if root is None:
            return
    real_root = Path(os.path.realpath(root))  # as given: a `..` after a link stays after it
    real = Path(os.path.realpath(path))
    if real == real_root or real_root in real.parents:
        return
    target, root = Path(path).absolute(), Path(root).absolute()  # `..` kept, for the message
    link = next(
        (p for p in [target, *target.parents] if p.is_symlink() and root in p.parents),
        target,
    )
    raise OutsideProjectError(
        f"{target}: writing here would land outside the project {root}, at {real}, because "
        f"{link} is a symbolic link; meta-evaluator never writes through a link out of the "
        "project. Replace the link with a real folder (or file) and run again.",
        path=target,
    )


def _project_root(target: Path) -> Path | None:
    linked = None
    for folder in target.parents:
        try:
            if not (folder / PROJECT_MARKER).is_file():
                continue
            if not folder.is_symlink():
                return folder
        except OSError:  # a folder we may not look into is not the project we write in
            continue
        linked = linked or folder
    return linked


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "wb", *, root: str | Path | None = None
) -> Iterator[IO[Any]]:
    r"""Open a temporary file beside `path`; on success, fsync it and move it over `path`.

    If the block raises, the temporary file is removed and `path` is left as it was.

    Args:
        path: The file to write; its folder is created if missing.
        mode: `"wb"` or `"w"` (text, UTF-8, `\\n` line endings).
        root: The project folder the file must stay in (see `check_inside_project`).

    Raises:
        OutsideProjectError: The path leads out of its project through a symlink.
        DiskFullError, PermissionDeniedError, StorageError: The file system refused the write.
    """
    target = Path(path)
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write: mode must be 'wb' or 'w', got {mode!r}")
    check_inside_project(target, root=root)
    if target.is_dir():
        raise StorageError(
            f"{target}: cannot write a file here, a folder of that name is in the way; "
            "move or remove the folder.",
            path=target,
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # The folder the check saw; mkstemp would collapse a `..` after a link (abspath).
        folder = Path(os.path.realpath(target.parent))
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=_TMP_SUFFIX)
    except OSError as exc:
        raise os_error(target, exc) from exc
    tmp = Path(tmp_name)
    try:
        kwargs: dict[str, Any] = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / target.name)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, StorageError) or not isinstance(exc, Exception):
            raise
        if isinstance(exc, OSError) or io_errno(exc) is not None:  # also polars' wrapped ones
            raise os_error(target, exc) from exc  # the previous file, if any, is unchanged
        raise
    fsync_folder(folder)


@contextlib.contextmanager
def removed_on_error(folder: str | Path) -> Iterator[None]:
    """Remove what the block created in `folder` if it raises, and only that.

    A folder that did not exist (nor its parents up to the first that did) is removed whole; in
    one that existed, the entries the block added are removed and everything that was there
    before stays, links included. For commands that make a project (`init`): a full disk
    half-way must not leave half a project behind.

    Args:
        folder: The folder the block fills.
    """
    target = Path(os.path.abspath(folder))
    created = None  # the topmost folder the block is about to create
    for candidate in [target, *target.parents]:
        if os.path.lexists(candidate):
            break
        created = candidate
    before = set(os.listdir(target)) if created is None and target.is_dir() else None
    try:
        yield
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        elif before is not None:
            with contextlib.suppress(OSError):
                for name in set(os.listdir(target)) - before:
                    entry = target / name
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        entry.unlink(missing_ok=True)
        raise


def fsync_folder(folder: Path) -> None:
    """Make the renames in `folder` durable (skipped where folders cannot be fsynced)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes, *, root: str | Path | None = None) -> None:
    """Write `data` to `path` atomically (`root`: as for `atomic_write`)."""
    with atomic_write(path, "wb", root=root) as handle:
        handle.write(data)


def atomic_write_text(path: str | Path, text: str, *, root: str | Path | None = None) -> None:
    r"""Write `text` to `path` atomically, as UTF-8 with `\\n` line endings (`root`: as above)."""
    with atomic_write(path, "w", root=root) as handle:
        handle.write(text)


def write_json(path: str | Path, obj: Any, *, root: str | Path | None = None) -> None:
    """Write `obj` as indented, key-ordered-as-given UTF-8 JSON, atomically, ending in a newline."""
    text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write_text(path, text, root=root)


def write_csv(
    path: str | Path, rows: Sequence[Mapping[str, Any]], *, root: str | Path | None = None
) -> None:
    """Write rows (dicts with the same keys) as CSV with a header, atomically; empty: no rows."""
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    atomic_write_text(path, buffer.getvalue(), root=root)


def read_json(path: str | Path) -> Any:
    """Read a JSON file; a missing, unreadable or malformed file raises with its path and line.

    Lists and objects nested more than `MAX_DEPTH` levels deep are refused (as malformed), so
    no reader of the value can exhaust Python's recursion.

    Raises:
        StorageError: The file cannot be read.
        StateError: The file is not valid JSON, or nests too deeply.
    """
    return parse_json(_read_text(path), path)


def write_yaml(path: str | Path, obj: Any, *, root: str | Path | None = None) -> None:
    """Write `obj` as block-style YAML, atomically, keys in the order given."""
    import yaml

    text = yaml.safe_dump(obj, sort_keys=False, allow_unicode=True)
    atomic_write_text(path, text, root=root)


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file as `yaml.safe_load` would (no arbitrary objects), refusing aliases.

    Every YAML file of a project is read here. Aliases (`*x`) are refused, so a small file cannot
    expand to gigabytes once read (the "billion laughs"); an anchor (`&x`) that no alias uses
    expands nothing and is read as if absent. A key given twice is refused instead of silently
    keeping the last. Lists and mappings nested more than `MAX_DEPTH` levels deep are refused
    as they are read, before PyYAML's recursive composer could exhaust Python's stack.

    Raises:
        StorageError: The file cannot be read.
        StateError: The file is not valid YAML (the message gives line and column), or nests
            too deeply.
    """
    return parse_yaml(_read_text(path), path)


def path_argument(value: object, *, what: str, field: str, error: type[MetaEvaluatorError]) -> Path:
    """`value`, an argument naming a file, as a Path.

    Raises:
        MetaEvaluatorError: Of class `error`, for `field`: `value` is neither a str nor a Path
            (`prompt_file must be a path, got int 3.`).
    """
    if not isinstance(value, str | Path):
        raise error(
            f"{what} must be a path, got {type(value).__name__} {shown(value)}.", field=field
        )
    return Path(value)


def read_yaml_list(
    path: object, section: str, *, entry: str, error: type[MetaEvaluatorError]
) -> tuple[Path, list[Any], list[dict[str, Any]]]:
    """The entries listed under `section:` in a YAML configuration file (`judges:`, `metrics:`).

    Returns the file, its entries, and one problem (`loc`, `msg`, `type`) per unknown top-level
    key: the caller adds each entry's problems and reports them all with `raise_problems`.

    Raises:
        MetaEvaluatorError: Of class `error`: `path` is not a path, or the file is missing, is
            not YAML, or holds no list under `section` (one `entry` per item).
    """
    file = path_argument(path, what=f"the {section} file", field="path", error=error)
    try:
        content = read_yaml(file)
    except MetaEvaluatorError as exc:
        raise error(exc.message, path=file) from exc
    if not isinstance(content, dict) or not isinstance(content.get(section), list):
        near = (
            difflib.get_close_matches(section, [str(k) for k in content if k != section], n=1)
            if isinstance(content, dict)
            else []
        )
        hint = f" It has '{near[0]}:'; did you mean '{section}:'?" if near else ""
        raise error(
            f"{file}: must hold a mapping with a list under '{section}:' (one entry per "
            f"{entry}).{hint}",
            path=file,
            field=section,
        )
    problems: list[dict[str, Any]] = [
        {
            "loc": str(key),
            "msg": f"unknown top-level key; only '{section}' is read",
            "type": "extra",
        }
        for key in sorted(set(content) - {section}, key=str)
    ]
    return file, content[section], problems


def yaml_mapping(
    content: object, file: Path, *, expected: str, error: type[MetaEvaluatorError]
) -> dict[str, Any]:
    """A YAML file's content read as a mapping: an empty file is an empty mapping.

    Raises:
        MetaEvaluatorError: Of class `error`: the content is something else; the message is
            `<file>: <expected> <the type found>.`, so `expected` ends in "got".
    """
    if content is None:
        return {}
    if not isinstance(content, dict):
        raise error(f"{file}: {expected} {type(content).__name__}.", path=file)
    return content


def raise_problems(
    file: Path, problems: list[dict[str, Any]], *, what: str, error: type[MetaEvaluatorError]
) -> None:
    """Raise `error` listing every problem of a configuration file, one line each.

    Each line reads `file: location: problem`; the problems are kept in the error's `errors`,
    and the first one's location is its `field`. Nothing happens when there is none.
    """
    if not problems:
        return
    lines = "\n".join(f"{file}: {p['loc']}: {p['msg']}" for p in problems)
    raise error(
        f"{file}: {len(problems)} problem(s) in the {what} configuration:\n{lines}",
        errors=problems,
        path=file,
        field=problems[0]["loc"],
    )


def write_parquet(path: str | Path, frame: pl.DataFrame, *, root: str | Path | None = None) -> None:
    """Write a polars frame as Parquet (zstd), atomically.

    Raises:
        OutsideProjectError: The path leads out of its project through a symlink.
        DiskFullError, PermissionDeniedError, StorageError: The file system refused the write
            (polars' `ComputeError` carrying the `errno` in its text included).
    """
    with atomic_write(path, "wb", root=root) as handle:
        # Built in memory, then written by us: a refused write is then an OSError with its
        # errno. polars writing the file itself can lose it ("Invalid thrift: transport error"
        # when the disk fills during the footer).
        buffer = io.BytesIO()
        frame.write_parquet(buffer, compression="zstd")
        handle.write(buffer.getbuffer())


def sha256(path: str | Path) -> str:
    """The hex SHA-256 digest of a file's bytes, read in 1 MiB blocks.

    Raises:
        PermissionDeniedError, StorageError: The file cannot be read.
    """
    import hashlib

    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise os_error(path, exc, "read") from exc
    return digest.hexdigest()


def _read_text(path: str | Path) -> str:
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise StorageError(f"{target}: no such file.", path=target) from exc
    except IsADirectoryError as exc:
        raise StorageError(f"{target}: is a folder, not a file.", path=target) from exc
    except UnicodeDecodeError as exc:
        raise StorageError(
            f"{target}: not UTF-8 text (byte {exc.start}); save it as UTF-8.", path=target
        ) from exc
    except OSError as exc:
        raise os_error(target, exc, "read") from exc
    check_lfs_pointer(target, text[: len(_LFS_POINTER)].encode())
    return text
