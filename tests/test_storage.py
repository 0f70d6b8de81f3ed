"""Unit tests of meta_evaluator.storage: atomic writes, JSON/YAML helpers and safe names."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from meta_evaluator.errors import PricesError, StateError, StorageError, UnsafeNameError
from meta_evaluator.storage import (
    atomic_write,
    atomic_write_bytes,
    atomic_write_text,
    check_safe_name,
    read_json,
    read_yaml,
    write_json,
    write_yaml,
    yaml_mapping,
)


class Boom(Exception):
    pass


def leftovers(folder: Path) -> list[str]:
    """Temporary files atomic_write may have left in `folder`."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- atomic_write -------------------------------------------------------------------------


def test_atomic_write_writes_bytes(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    with atomic_write(target, "wb") as handle:
        handle.write(b"\x00\x01payload")
    assert target.read_bytes() == b"\x00\x01payload"
    assert leftovers(tmp_path) == []


def test_atomic_write_replaces_existing_content(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old content that is longer than the new one")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_atomic_write_keeps_old_content_when_block_raises(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    with pytest.raises(Boom), atomic_write(target, "wb") as handle:
        handle.write(b"half-written new content")
        raise Boom
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_atomic_write_creates_nothing_when_block_raises_on_new_file(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    with pytest.raises(Boom), atomic_write(target, "w") as handle:
        handle.write("partial")
        raise Boom
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_keeps_old_content_on_keyboard_interrupt(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_write(target, "w") as handle:
        handle.write("new")
        raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_write_turns_oserror_in_block_into_storage_error(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(StorageError) as info, atomic_write(target, "w") as handle:
        handle.write("new")
        raise OSError(28, "No space left on device")
    assert isinstance(info.value, OSError)
    assert info.value.path == target
    assert str(target) in str(info.value)
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_write_leaves_no_temporary_file_on_success(tmp_path: Path) -> None:
    for index in range(3):
        atomic_write_bytes(tmp_path / f"f{index}.bin", b"x" * index)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0.bin", "f1.bin", "f2.bin"]


def test_atomic_write_creates_parent_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c" / "out.txt"
    atomic_write_text(target, "deep")
    assert target.read_text() == "deep"
    assert leftovers(target.parent) == []


def test_atomic_write_accepts_str_path(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(str(target), "via str")
    assert target.read_text() == "via str"


def test_atomic_write_refuses_directory_in_the_way(tmp_path: Path) -> None:
    target = tmp_path / "results"
    target.mkdir()
    (target / "inside.txt").write_text("keep me")
    with pytest.raises(StorageError) as info, atomic_write(target, "wb") as handle:
        handle.write(b"never")
    assert info.value.path == target
    assert "folder" in str(info.value)
    assert target.is_dir()
    assert (target / "inside.txt").read_text() == "keep me"
    assert leftovers(tmp_path) == []


def test_atomic_write_refuses_file_in_the_way_of_parent(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    with pytest.raises(StorageError):
        atomic_write_text(blocker / "child.txt", "never")
    assert blocker.read_text() == "a file, not a folder"


def test_atomic_write_text_uses_lf_line_endings_and_utf8(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(target, "first\nsecond é ✓\nthird\n")
    assert target.read_bytes() == "first\nsecond é ✓\nthird\n".encode()
    assert b"\r" not in target.read_bytes()


def test_atomic_write_text_mode_handle_writes_lf(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with atomic_write(target, "w") as handle:
        handle.write("a\n")
        print("b", file=handle)
    assert target.read_bytes() == b"a\nb\n"


def test_atomic_write_file_is_readable(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(target, "x")
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode & 0o444 == 0o444  # mkstemp's 0o600 would hide the file from other readers
    assert mode & 0o022 == 0


def test_atomic_write_rejects_unknown_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with pytest.raises(ValueError, match="mode"), atomic_write(target, "a"):
        pass
    assert not target.exists()


# --- JSON and YAML ------------------------------------------------------------------------


def test_write_json_read_json_round_trip(tmp_path: Path) -> None:
    obj = {"b": 1, "a": [1.5, None, True, "é ✓"], "nested": {"z": {}, "y": []}}
    target = tmp_path / "state.json"
    write_json(target, obj)
    assert read_json(target) == obj
    text = target.read_text(encoding="utf-8")
    assert text.endswith("\n")
    assert "é ✓" in text  # not escaped
    assert list(read_json(target)) == ["b", "a", "nested"]  # key order as given


def test_write_json_refuses_nan_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    with pytest.raises(ValueError):
        write_json(target, {"x": float("nan")})
    assert not target.exists()


def test_read_json_malformed_raises_state_error_with_line(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text('{\n  "a": 1,\n  "b": oops\n}\n')
    with pytest.raises(StateError) as info:
        read_json(target)
    message = str(info.value)
    assert "line 3" in message
    assert str(target) in message
    assert info.value.path == target
    assert isinstance(info.value, ValueError)


def test_read_json_missing_file_raises_storage_error(tmp_path: Path) -> None:
    target = tmp_path / "nope.json"
    with pytest.raises(StorageError) as info:
        read_json(target)
    assert info.value.path == target
    assert str(target) in str(info.value)
    assert not isinstance(info.value, StateError)


def test_read_json_folder_raises_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        read_json(tmp_path)


def test_read_json_non_utf8_raises_storage_error(tmp_path: Path) -> None:
    target = tmp_path / "latin1.json"
    target.write_bytes('{"a": "é"}'.encode("latin-1"))
    with pytest.raises(StorageError):
        read_json(target)


def test_write_yaml_read_yaml_round_trip(tmp_path: Path) -> None:
    obj = {
        "judges": [
            {"id": "gpt_4o_mini_judge", "model": "gpt-4o-mini", "temperature": 0.0},
            {"id": "claude.3", "prompt": "Line one\nLine two é ✓\n", "max_tokens": None},
        ],
        "zeta": True,
        "alpha": [1, 2, 3],
    }
    target = tmp_path / "judges.yaml"
    write_yaml(target, obj)
    assert read_yaml(target) == obj
    assert list(read_yaml(target)) == ["judges", "zeta", "alpha"]  # not sorted
    text = target.read_text(encoding="utf-8")
    assert "é ✓" in text
    assert "{" not in text.splitlines()[0]  # block style


def test_read_yaml_malformed_raises_state_error_with_line(tmp_path: Path) -> None:
    target = tmp_path / "judges.yaml"
    target.write_text("judges:\n  - id: a\n    model: [unclosed\n  - id: b\n")
    with pytest.raises(StateError) as info:
        read_yaml(target)
    message = str(info.value)
    assert re.search(r"line \d+", message)
    assert str(target) in message


def test_read_yaml_error_reports_the_right_line(tmp_path: Path) -> None:
    target = tmp_path / "bad.yaml"
    target.write_text("a: 1\nb: 2\nc: : :\n")
    with pytest.raises(StateError, match="line 3"):
        read_yaml(target)


def test_read_yaml_missing_file_raises_storage_error(tmp_path: Path) -> None:
    target = tmp_path / "missing.yaml"
    with pytest.raises(StorageError) as info:
        read_yaml(target)
    assert info.value.path == target


def test_read_yaml_does_not_build_python_objects(tmp_path: Path) -> None:
    target = tmp_path / "evil.yaml"
    target.write_text("x: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(StateError):
        read_yaml(target)


# --- check_safe_name ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["gpt-4o-mini", "judge_1", "claude.3", "A", "9", "a.b.c", "x" * 128, "CONSOLE", "COM0"],
)
def test_check_safe_name_accepts(name: str) -> None:
    assert check_safe_name(name, field="judge_id") == name


@pytest.mark.parametrize(
    "name",
    [
        "../x",
        "a/b",
        "a\\b",
        "",
        ".hidden",
        ".",
        "..",
        "CON",
        "con",
        "nul.txt",
        "COM1",
        "lpt9.log",
        "x.",
        "x" * 129,
        "a b",
        "a\x00b",
        "-flag",
        "_x",
        "é",
        "a:b",
        "x\n",
    ],
)
def test_check_safe_name_rejects(name: str) -> None:
    with pytest.raises(UnsafeNameError) as info:
        check_safe_name(name, field="judge_id")
    assert isinstance(info.value, ValueError)
    assert info.value.field == "judge_id"
    assert "judge_id" in str(info.value)


@pytest.mark.parametrize("value", [None, 1, 1.5, b"judge", Path("judge"), ["judge"]])
def test_check_safe_name_rejects_non_strings(value: object) -> None:
    with pytest.raises(UnsafeNameError, match="must be a string") as info:
        check_safe_name(value, field="annotator_id")
    assert info.value.field == "annotator_id"


def test_check_safe_name_message_says_why() -> None:
    with pytest.raises(UnsafeNameError, match="129 characters"):
        check_safe_name("x" * 129, field="run_id")
    with pytest.raises(UnsafeNameError, match="Windows"):
        check_safe_name("aux", field="run_id")
    with pytest.raises(UnsafeNameError, match="empty"):
        check_safe_name("", field="run_id")


def _suggestion(name: str) -> str:
    with pytest.raises(UnsafeNameError) as info:
        check_safe_name(name, field="judge_id")
    match = re.search(r"\(for example '(.*)'\)", str(info.value), re.DOTALL)
    assert match, str(info.value)
    return match.group(1)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("../x", "x"), ("a/b", "a_b"), (".hidden", "hidden"), ("CON", "id_CON"), ("x.", "x")],
)
def test_check_safe_name_suggests_a_safe_name(name: str, expected: str) -> None:
    suggestion = _suggestion(name)
    assert suggestion == expected
    assert check_safe_name(suggestion, field="judge_id") == suggestion


@pytest.mark.parametrize(
    "name",
    ["a" * 127 + ".b", "CON." + "a" * 124, "a" * 200, "é" * 130],
    ids=["truncated-to-dot", "reserved-at-limit", "long", "long-non-ascii"],
)
def test_check_safe_name_suggestion_for_long_names_is_itself_safe(name: str) -> None:
    suggestion = _suggestion(name)
    assert check_safe_name(suggestion, field="judge_id") == suggestion


def test_sha256_of_a_file_that_cannot_be_read_is_typed(tmp_path: Path) -> None:
    from meta_evaluator.storage import sha256

    missing = tmp_path / "gone.csv"
    with pytest.raises(StorageError) as caught:
        sha256(missing)
    assert caught.value.path == missing


# --- yaml_mapping --------------------------------------------------------------------------


def test_yaml_mapping_reads_an_empty_file_as_an_empty_mapping(tmp_path: Path) -> None:
    file = tmp_path / "prices.yaml"
    assert yaml_mapping(None, file, expected="must be a mapping, got", error=PricesError) == {}
    given = {"a": 1}
    assert yaml_mapping(given, file, expected="must be a mapping, got", error=PricesError) is given


@pytest.mark.parametrize(("content", "kind"), [([1, 2], "list"), ("text", "str"), (3, "int")])
def test_yaml_mapping_refuses_other_content_naming_the_file(
    tmp_path: Path, content: object, kind: str
) -> None:
    file = tmp_path / "prices.yaml"
    with pytest.raises(PricesError) as caught:
        yaml_mapping(content, file, expected="must be a mapping; got", error=PricesError)
    assert caught.value.message == f"{file}: must be a mapping; got {kind}."
    assert caught.value.path == file
