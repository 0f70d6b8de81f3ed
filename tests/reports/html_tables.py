"""Read report.html back: its title, and each kind's section with its tables and images.

A small `html.parser` reader, so the tests compare the numbers a reader sees with the numbers
the result JSON holds, not the strings the code meant to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

_RATE = re.compile(r"^(-?\d+(?:\.\d+)?)(?: \[(-?\d+\.\d+), (-?\d+\.\d+)\])?$")


@dataclass
class Table:
    """A table: the heading (h3) it follows, its header and its rows of cell texts."""

    after: str | None
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    def records(self) -> list[dict[str, str]]:
        """Each row as header -> cell."""
        return [dict(zip(self.header, row, strict=True)) for row in self.rows]


@dataclass
class Section:
    """A `<section class='kind ...'>`: its h2, its text, tables and embedded images."""

    classes: list[str]
    title: str = ""
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    images: list[str] = field(default_factory=list)

    def table(self, after: str) -> Table:
        """The table that follows the h3 `after`."""
        found = [t for t in self.tables if t.after == after]
        assert len(found) == 1, (after, [t.after for t in self.tables])
        return found[0]


@dataclass
class Page:
    """What the page shows: its title (h1), its h2 headings, its kind sections."""

    title: str = ""
    headings: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    text: str = ""

    def section(self, title: str) -> Section:
        found = [s for s in self.sections if s.title == title]
        assert len(found) == 1, (title, [s.title for s in self.sections])
        return found[0]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.section: Section | None = None
        self.heading: str | None = None  # the tag whose text is being read: h1, h2, h3
        self.buffer = ""
        self.last_h3: str | None = None
        self.table: Table | None = None
        self.row: list[str] | None = None
        self.cell: str | None = None
        self.in_header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and "kind" in (found.get("class") or "").split():
            self.section = Section(classes=(found.get("class") or "").split())
            self.page.sections.append(self.section)
            self.last_h3 = None
        elif tag in ("h1", "h2", "h3"):
            self.heading, self.buffer = tag, ""
        elif tag == "table":
            self.table = Table(after=self.last_h3)
            if self.section is not None:
                self.section.tables.append(self.table)
        elif tag == "tr":
            self.row, self.in_header = [], False
        elif tag in ("td", "th"):
            self.cell = ""
            self.in_header = self.in_header or tag == "th"
        elif tag == "img" and self.section is not None:
            self.section.images.append(found.get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None
        elif tag == self.heading:
            text = " ".join(self.buffer.split())
            if tag == "h1":
                self.page.title = text
            elif tag == "h2":
                self.page.headings.append(text)
                if self.section is not None:
                    self.section.title = text
            else:
                self.last_h3 = text
            self.heading = None
        elif tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row.append(" ".join(self.cell.split()))
            self.cell = None
        elif tag == "tr" and self.table is not None and self.row is not None:
            if self.in_header:
                self.table.header = self.row
            else:
                self.table.rows.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data: str) -> None:
        self.page.text += data
        if self.section is not None:
            self.section.text += data
        if self.heading is not None:
            self.buffer += data
        if self.cell is not None:
            self.cell += data


def read_page(html: str) -> Page:
    """The page `html` as its reader sees it."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


def shown(cell: str) -> tuple[float | None, tuple[float, float] | None]:
    """`0.596 [0.467, 0.714]` -> (0.596, (0.467, 0.714)); `n/a` -> (None, None)."""
    if cell == "n/a":
        return None, None
    match = _RATE.match(cell)
    assert match, f"not a number: {cell!r}"
    value = float(match.group(1))
    if match.group(2) is None:
        return value, None
    return value, (float(match.group(2)), float(match.group(3)))


def same(cell: str, value: Any, interval: Any = None, digits: int = 3) -> bool:
    """Whether a cell shows `value` (and `interval`) to `digits` decimals (n/a for None)."""
    number, bounds = shown(cell)
    if value is None:
        return number is None
    tolerance = 0.5 * 10**-digits + 1e-9
    if number is None or abs(number - value) > tolerance:
        return False
    if interval is None:
        return bounds is None
    return bounds is not None and all(
        abs(b - x) <= tolerance for b, x in zip(bounds, interval, strict=True)
    )
