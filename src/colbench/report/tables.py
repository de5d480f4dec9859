"""Rich tables (what the terminal shows) as the tables of the report's and the dashboard's pages, and as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.errors import MarkupError
from rich.table import Table
from rich.text import Text

from colbench.render.fmt import md_text

STYLE_CLASSES = (("red", "bad"), ("yellow", "warn"), ("green", "good"), ("dim", "dim"))


@dataclass
class Column:
    name: str
    align: str = "left"
    css: str = ""  # e.g. "pre": keep the cell's line breaks and never wrap inside a line (versions)


@dataclass
class Cell:
    text: str
    css: str = ""


@dataclass
class TableView:
    title: str
    columns: list[Column]
    rows: list[list[Cell]]
    links: list[str | None] = field(default_factory=list)  # per row, e.g. the case's history page
    note: str = ""  # under the table: what its figures are (units, what a column divides)
    css: str = ""  # a class for the table, e.g. "claims"



def _css(style: Any) -> str:
    text = str(style or "")
    return " ".join(css for name, css in STYLE_CLASSES if name in text.split() or text == name)


def _cell(renderable: Any, column_style: Any) -> Cell:
    if isinstance(renderable, Text):
        text = renderable
    else:
        try:
            text = Text.from_markup(str(renderable))
        except MarkupError:
            text = Text(str(renderable))
    classes = {_css(span.style) for span in text.spans} | {_css(column_style)}
    return Cell(text.plain, " ".join(sorted(c for c in classes if c)))


def table_view(table: Table, links: Sequence[str | None] = ()) -> TableView:
    """The same rows and columns as a Rich table, colours turned into CSS classes."""
    columns = [Column(str(c.header), "right" if c.justify == "right" else "left") for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    rows = [[_cell(cells[j][i], table.columns[j].style) for j in range(len(columns))] for i in range(table.row_count)]
    return TableView(str(table.title or ""), columns, rows, list(links))


def markdown_table(view: TableView) -> str:
    md = md_text
    lines = [f"**{md(view.title)}**", ""] if view.title else []
    lines.append("| " + " | ".join(md(c.name) for c in view.columns) + " |")
    lines.append("|" + "|".join("---:" if c.align == "right" else "---" for c in view.columns) + "|")
    lines += ["| " + " | ".join(_md_cell(cell.text) for cell in row) + " |" for row in view.rows]
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    """A cell of several lines (a benchmark's params, a side's versions) keeps them: GitHub renders <br> in a table."""
    return "<br>".join(md_text(line) for line in text.splitlines())
