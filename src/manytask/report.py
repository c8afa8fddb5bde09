"""A small, self-contained HTML report: sections of paragraphs, tables and PNG figures.

Every demo (posterior, Bayesian optimisation, boosting, infinite task learning) builds one
:class:`Section` and adds it to a shared :class:`Report`; :meth:`Report.write` then writes
``<out_dir>/index.html`` and the figures next to it. The page has inline CSS and no scripts or
external assets, so the folder can be copied or attached as it is.

Nothing is written outside ``out_dir``: figure file names are checked (no path separators)
and every file is written atomically (temporary file in the same folder, then
:func:`os.replace`). Plotting itself lives with each demo; this module only stores PNG bytes.
"""

from __future__ import annotations

import html
import io
import numbers
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Report", "Section", "text_table", "write_atomic"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
h1 { border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h2 { margin-top: 2.5rem; border-bottom: 1px solid #eee; }
nav ul { padding-left: 1.2rem; }
table { border-collapse: collapse; margin: 1rem 0; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-style: italic; padding-bottom: .3rem; }
th, td { border: 1px solid #ccc; padding: .25rem .6rem; }
th { background: #f4f4f4; }
td.num { text-align: right; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-style: italic; color: #555; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; }
footer { margin-top: 3rem; color: #888; font-size: .85rem; }
"""


@dataclass(frozen=True)
class _Paragraph:
    text: str

    def to_html(self, section: Section) -> str:
        return f"<p>{html.escape(self.text)}</p>"


@dataclass(frozen=True)
class _Preformatted:
    text: str

    def to_html(self, section: Section) -> str:
        return f"<pre>{html.escape(self.text)}</pre>"


@dataclass(frozen=True)
class _Table:
    columns: tuple
    rows: tuple
    caption: str | None
    float_format: str

    def _cell(self, value) -> str:
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)):
            return f'<td class="num">{html.escape(format(float(value), self.float_format))}</td>'
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return f'<td class="num">{int(value)}</td>'
        return f"<td>{html.escape(str(value))}</td>"

    def to_html(self, section: Section) -> str:
        lines = ["<table>"]
        if self.caption:
            lines.append(f"<caption>{html.escape(self.caption)}</caption>")
        header = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.columns)
        lines.append(f"<thead><tr>{header}</tr></thead>")
        lines.append("<tbody>")
        for row in self.rows:
            lines.append("<tr>" + "".join(self._cell(v) for v in row) + "</tr>")
        lines.append("</tbody></table>")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Figure:
    name: str
    png: bytes
    caption: str | None
    alt: str

    def to_html(self, section: Section) -> str:
        source = html.escape(section.figure_filename(self.name))
        caption = f"<figcaption>{html.escape(self.caption)}</figcaption>" if self.caption else ""
        return f'<figure><img src="{source}" alt="{html.escape(self.alt)}">{caption}</figure>'


def text_table(columns, rows, total_row: bool = False) -> str:
    """Rows of strings as an aligned plain-text table for the terminal: first column left,
    the others right-aligned, a rule under the header (and above the last row if
    ``total_row``).

    Parameters
    ----------
    columns : sequence
        Header cells.
    rows : sequence of sequences
        Body cells, one value per column (converted with ``str``).
    total_row : bool, default=False
        Set the last row apart, as a total.

    Returns
    -------
    str
        The table, lines joined by newlines.

    Examples
    --------
    >>> print(text_table(["task", "error"], [["a", "0.1"], ["mean", "0.1"]], total_row=True))
    task  error
    ----  -----
    a       0.1
    ----  -----
    mean    0.1
    """
    cells = [list(map(str, columns))] + [list(map(str, row)) for row in rows]
    widths = [max(len(line[j]) for line in cells) for j in range(len(cells[0]))]
    rule = "  ".join("-" * w for w in widths)

    def render(line):
        rest = [value.rjust(width) for value, width in zip(line[1:], widths[1:])]
        return "  ".join([line[0].ljust(widths[0]), *rest])

    body = [render(line) for line in cells[1:]]
    if total_row and body:
        body.insert(len(body) - 1, rule)
    return "\n".join([render(cells[0]), rule, *body])


def slugify(text: str) -> str:
    """Lower-case ASCII identifier made of letters, digits and dashes (``"section"`` if empty).

    Examples
    --------
    >>> slugify("Multi-task posterior: 4 tasks")
    'multi-task-posterior-4-tasks'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "section"


class Section:
    """One titled part of a :class:`Report`: paragraphs, tables and figures, in order.

    Parameters
    ----------
    title : str
        Heading of the section; plain text (it is escaped).
    slug : str, optional
        Identifier used for the HTML anchor and as the prefix of figure file names; by
        default derived from ``title``. Letters, digits, ``_``, ``.`` and ``-`` only.

    Examples
    --------
    >>> section = Section("Posterior <demo>")
    >>> section = section.add_paragraph("Errors & ratios.").add_table(
    ...     rows=[["task 1", 0.1234567]], columns=["task", "RMSE"])
    >>> "Posterior &lt;demo&gt;" in section.to_html()
    True
    """

    def __init__(self, title: str, slug: str | None = None):
        self.title = str(title)
        self.slug = slugify(self.title) if slug is None else _check_name(slug, "slug")
        self.blocks: list = []

    def __repr__(self):
        return f"Section({self.title!r}, {len(self.blocks)} blocks)"

    def add_paragraph(self, text: str) -> Section:
        """Append a paragraph of plain text (escaped, not interpreted as HTML).

        Parameters
        ----------
        text : str
            The paragraph.

        Returns
        -------
        Section
            self, to chain calls.

        Examples
        --------
        >>> Section("Notes").add_paragraph("a < b").to_html().count("a &lt; b")
        1
        """
        self.blocks.append(_Paragraph(str(text)))
        return self

    def add_preformatted(self, text: str) -> Section:
        """Append monospaced text, e.g. the aligned table a command printed.

        Parameters
        ----------
        text : str
            The text, shown as it is (escaped) in a ``<pre>`` element.

        Returns
        -------
        Section
            self, to chain calls.

        Examples
        --------
        >>> "<pre>" in Section("Output").add_preformatted("x  1").to_html()
        True
        """
        self.blocks.append(_Preformatted(str(text)))
        return self

    def add_table(
        self,
        rows: Sequence[Sequence],
        columns: Sequence[str],
        caption: str | None = None,
        float_format: str = ".4g",
    ) -> Section:
        """Append a table; real numbers are formatted with ``float_format`` and right-aligned.

        Parameters
        ----------
        rows : sequence of sequences
            Body cells, one value per column.
        columns : sequence of str
            Header cells.
        caption : str, optional
            Caption above the table.
        float_format : str, default=".4g"
            Format specification of real numbers.

        Returns
        -------
        Section
            self, to chain calls.

        Raises
        ------
        ValueError
            If a row does not have one value per column.

        Examples
        --------
        >>> html = Section("Errors").add_table([["a", 0.123456]], ["task", "error"]).to_html()
        >>> '<td class="num">0.1235</td>' in html
        True
        """
        columns = tuple(str(c) for c in columns)
        rows = tuple(tuple(row) for row in rows)
        for i, row in enumerate(rows):
            if len(row) != len(columns):
                raise ValueError(
                    f"rows[{i}] has {len(row)} values but there are {len(columns)} columns"
                )
        format(1.0, float_format)  # fail now, not at write time, on a bad format
        self.blocks.append(_Table(columns, rows, caption, float_format))
        return self

    def add_figure(
        self,
        figure,
        name: str,
        caption: str | None = None,
        alt: str | None = None,
        dpi: int = 100,
    ) -> Section:
        """Append a figure, stored as PNG bytes and written as ``<slug>-<name>.png``.

        Parameters
        ----------
        figure : matplotlib.figure.Figure or bytes
            A figure (rendered now with ``savefig(format="png")``, so it may be closed
            afterwards) or the bytes of a PNG file.
        name : str
            File name stem: letters, digits, ``_``, ``.`` and ``-`` (no path separators).
        caption, alt : str, optional
            Caption under the image, and its alternative text (defaults to the caption).
        dpi : int, default=100
            Resolution used when rendering a matplotlib figure.

        Returns
        -------
        Section
            self, to chain calls.

        Raises
        ------
        ValueError
            If ``name`` is unsafe or already used in the section, or ``figure`` is neither.

        Examples
        --------
        >>> from manytask._figures import agg_figure
        >>> section = Section("Plots").add_figure(agg_figure(2.0, 1.0), "curve", caption="A curve")
        >>> [filename for filename, _ in section.figures]
        ['plots-curve.png']
        """
        name = _check_name(name, "name")
        if name.lower().endswith(".png"):
            name = name[:-4]
        if any(isinstance(b, _Figure) and b.name == name for b in self.blocks):
            raise ValueError(f"section {self.slug!r} already has a figure named {name!r}")
        if isinstance(figure, (bytes, bytearray)):
            png = bytes(figure)
        elif hasattr(figure, "savefig"):
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=dpi)
            png = buffer.getvalue()
        else:
            raise ValueError(
                f"figure must be a matplotlib Figure or PNG bytes, got {type(figure).__name__}"
            )
        if not png.startswith(PNG_SIGNATURE):
            raise ValueError(f"figure {name!r} is not a PNG image")
        alt_text = alt if alt is not None else (caption or name)
        self.blocks.append(_Figure(name, png, caption, alt_text))
        return self

    def figure_filename(self, name: str) -> str:
        """File name, relative to the report folder, of the figure called ``name``.

        Parameters
        ----------
        name : str
            The figure's name, as given to :meth:`add_figure`.

        Returns
        -------
        str
            ``<slug>-<name>.png``.

        Examples
        --------
        >>> Section("Multi-task posterior").figure_filename("mean")
        'multi-task-posterior-mean.png'
        """
        return f"{self.slug}-{name}.png"

    @property
    def figures(self) -> list[tuple[str, bytes]]:
        """``(file name, PNG bytes)`` of every figure, in order.

        Examples
        --------
        >>> Section("Plots").figures
        []
        """
        blocks = [b for b in self.blocks if isinstance(b, _Figure)]
        return [(self.figure_filename(b.name), b.png) for b in blocks]

    def to_html(self) -> str:
        """The section as an HTML fragment (``<section>`` element).

        Returns
        -------
        str
            The fragment, with the title as ``<h2>`` and the slug as its anchor.

        Examples
        --------
        >>> print(Section("Notes").to_html())
        <section id="notes">
        <h2>Notes</h2>
        <BLANKLINE>
        </section>
        """
        body = "\n".join(block.to_html(self) for block in self.blocks)
        return (
            f'<section id="{html.escape(self.slug)}">\n'
            f"<h2>{html.escape(self.title)}</h2>\n{body}\n</section>"
        )


class Report:
    """An HTML report in a folder: ``index.html`` plus one PNG per figure.

    Parameters
    ----------
    out_dir : str or path-like
        Folder to write into; created (with its parents) by :meth:`write` if missing.
    title : str
        Title of the page.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     report = Report(pathlib.Path(folder) / "report", title="manytask")
    ...     _ = report.add_section(Section("Notes")).add_paragraph("a < b")
    ...     index = report.write()
    ...     print(index.name, "a &lt; b" in index.read_text())
    index.html True
    """

    def __init__(self, out_dir, title: str = "manytask report"):
        self.out_dir = Path(out_dir)
        self.title = str(title)
        self.sections: list[Section] = []

    def __repr__(self):
        return f"Report({str(self.out_dir)!r}, {len(self.sections)} sections)"

    def add_section(self, section: Section) -> Section:
        """Append ``section`` and return it; its slug must be new in this report.

        Parameters
        ----------
        section : Section
            The section.

        Returns
        -------
        Section
            ``section``, to fill it in after adding it.

        Raises
        ------
        ValueError
            If ``section`` is not a Section or its slug is taken.

        Examples
        --------
        >>> report = Report("unused-folder")
        >>> report.add_section(Section("Notes")).title
        'Notes'
        >>> len(report.sections)
        1
        """
        if not isinstance(section, Section):
            raise ValueError(f"section must be a Section, got {type(section).__name__}")
        if any(s.slug == section.slug for s in self.sections):
            raise ValueError(
                f"the report already has a section with slug {section.slug!r}; "
                "pass slug= to Section to tell them apart"
            )
        self.sections.append(section)
        return section

    @property
    def index_path(self) -> Path:
        """Where :meth:`write` puts the page: ``out_dir / "index.html"``.

        Examples
        --------
        >>> Report("out").index_path.as_posix()
        'out/index.html'
        """
        return self.out_dir / "index.html"

    def to_html(self) -> str:
        """The whole page as a string.

        Returns
        -------
        str
            A complete HTML document with inline CSS, no scripts and no external assets.

        Examples
        --------
        >>> Report("unused-folder", title="T").to_html().startswith("<!DOCTYPE html>")
        True
        """
        from . import __version__

        title = html.escape(self.title)
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            f"<h1>{title}</h1>",
        ]
        if len(self.sections) > 1:
            items = "".join(
                f'<li><a href="#{html.escape(s.slug)}">{html.escape(s.title)}</a></li>'
                for s in self.sections
            )
            parts.append(f"<nav><ul>{items}</ul></nav>")
        parts.extend(section.to_html() for section in self.sections)
        parts.append(f"<footer>Written by manytask {html.escape(__version__)}.</footer>")
        parts.extend(["</body>", "</html>", ""])
        return "\n".join(parts)

    def write(self) -> Path:
        """Write the figures, then ``index.html``, each atomically.

        Returns
        -------
        Path
            :attr:`index_path`.

        Raises
        ------
        ValueError
            If two sections would write the same figure file.
        OSError
            If ``out_dir`` cannot be created or written (e.g. it is an existing file).

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     print(Report(folder).write().name)
        index.html
        """
        figures = [item for section in self.sections for item in section.figures]
        names = [filename for filename, _ in figures]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"several figures would be written to {duplicates}")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for filename, png in figures:
            write_atomic(self.out_dir, filename, png)
        write_atomic(self.out_dir, self.index_path.name, self.to_html().encode("utf-8"))
        return self.index_path


def _check_name(name: str, parameter: str) -> str:
    name = str(name)
    if not _SAFE_NAME.match(name):
        raise ValueError(
            f"{parameter} must start with a letter or digit and use only letters, digits, "
            f"'_', '.' and '-', got {name!r}"
        )
    return name


def write_atomic(folder: Path, filename: str, data: bytes) -> None:
    """Write ``folder / filename`` via a temporary file in ``folder`` and :func:`os.replace`.

    A reader never sees a half-written file; on error the temporary file is removed.

    Parameters
    ----------
    folder : Path
        An existing folder.
    filename : str
        Name of the file in it.
    data : bytes
        The content.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_atomic(Path(folder), "a.txt", b"hello")
    ...     print((Path(folder) / "a.txt").read_text())
    hello
    """
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, folder / filename)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
