"""Tests of manytask.report: what is written, where, and how text is escaped."""

from __future__ import annotations

import os
from html.parser import HTMLParser

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from manytask.report import PNG_SIGNATURE, Report, Section

VOID_ELEMENTS = {"meta", "img", "br", "hr", "link", "input"}


class _PageParser(HTMLParser):
    """Collects image sources, text, and checks that every non-void element is closed."""

    def __init__(self):
        super().__init__()
        self.open_tags: list[str] = []
        self.mismatches: list[tuple[str, str | None]] = []
        self.images: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        if tag not in VOID_ELEMENTS:
            self.open_tags.append(tag)

    def handle_endtag(self, tag):
        expected = self.open_tags.pop() if self.open_tags else None
        if expected != tag:
            self.mismatches.append((tag, expected))

    def handle_data(self, data):
        self.text.append(data)


def _parse(path) -> _PageParser:
    parser = _PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def _small_figure() -> Figure:
    figure = Figure(figsize=(2, 2))
    FigureCanvasAgg(figure)
    figure.subplots().plot([0, 1], [1, 0])
    return figure


def _tree(folder) -> set[str]:
    return {
        os.path.relpath(os.path.join(root, name), folder)
        for root, dirs, files in os.walk(folder)
        for name in dirs + files
    }


def _example_report(out_dir) -> Report:
    report = Report(out_dir, title="Example")
    section = report.add_section(Section("Posterior demo"))
    section.add_paragraph("Some text.")
    section.add_table(rows=[["task 1", 0.25, 3]], columns=["task", "RMSE", "wins"])
    section.add_figure(_small_figure(), name="tasks", caption="A figure")
    return report


def test_report_writes_only_index_and_figures_inside_out_dir(tmp_path, monkeypatch):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    parent_before = sorted(os.listdir(tmp_path.parent))
    index = _example_report(workspace / "out").write()
    assert index == workspace / "out" / "index.html"
    assert _tree(workspace) == {"out", "out/index.html", "out/posterior-demo-tasks.png"}
    assert sorted(os.listdir(tmp_path.parent)) == parent_before


def test_report_creates_missing_parent_folders(tmp_path):
    index = _example_report(tmp_path / "a" / "b").write()
    assert index.is_file()


def test_report_image_points_to_png_next_to_index(tmp_path):
    index = _example_report(tmp_path).write()
    page = _parse(index)
    assert page.images == ["posterior-demo-tasks.png"]
    assert (tmp_path / page.images[0]).read_bytes().startswith(PNG_SIGNATURE)


def test_report_page_is_well_formed_and_contains_section_title(tmp_path):
    page = _parse(_example_report(tmp_path).write())
    assert page.mismatches == []
    assert page.open_tags == []
    assert "Posterior demo" in page.text
    assert "0.25" in page.text


def test_report_escapes_html_in_titles_text_and_tables(tmp_path):
    report = Report(tmp_path, title="<b>report</b>")
    section = report.add_section(Section("<script>alert(1)</script>"))
    section.add_paragraph("a < b & c > d")
    section.add_table(rows=[["<i>x</i>", 1.0]], columns=["<th>", "value"], caption="<caption>")
    source = report.write().read_text(encoding="utf-8")
    assert "<script>" not in source
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in source
    assert "a &lt; b &amp; c &gt; d" in source
    assert "&lt;i&gt;x&lt;/i&gt;" in source
    assert "<b>" not in source
    assert "<i>" not in source


def test_report_has_no_external_assets_or_scripts(tmp_path):
    source = _example_report(tmp_path).write().read_text(encoding="utf-8")
    assert "<script" not in source
    assert "http://" not in source and "https://" not in source
    assert "<style>" in source


def test_rewriting_a_report_replaces_its_files(tmp_path):
    _example_report(tmp_path).write()
    first = (tmp_path / "index.html").read_text(encoding="utf-8")
    _example_report(tmp_path).write()
    assert (tmp_path / "index.html").read_text(encoding="utf-8") == first
    assert sorted(os.listdir(tmp_path)) == ["index.html", "posterior-demo-tasks.png"]


def test_sections_appear_in_order_with_a_table_of_contents(tmp_path):
    report = Report(tmp_path)
    report.add_section(Section("First")).add_paragraph("one")
    report.add_section(Section("Second")).add_paragraph("two")
    source = report.write().read_text(encoding="utf-8")
    assert source.index('id="first"') < source.index('id="second"')
    assert 'href="#first"' in source and 'href="#second"' in source


def test_figure_bytes_are_accepted_and_non_png_rejected(tmp_path):
    section = Section("Figures")
    section.add_figure(PNG_SIGNATURE + b"rest", name="raw")
    with pytest.raises(ValueError, match="not a PNG"):
        section.add_figure(b"GIF89a", name="gif")
    with pytest.raises(ValueError, match="matplotlib Figure or PNG bytes"):
        section.add_figure("figure.png", name="text")


@pytest.mark.parametrize("name", ["../escape", "sub/dir", "/abs", ".hidden", "", "a b"])
def test_figure_names_that_could_leave_the_folder_are_rejected(name):
    with pytest.raises(ValueError, match="name must start with a letter or digit"):
        Section("Figures").add_figure(PNG_SIGNATURE, name=name)


def test_duplicate_section_slug_is_rejected(tmp_path):
    report = Report(tmp_path)
    report.add_section(Section("Same title"))
    with pytest.raises(ValueError, match="slug 'same-title'"):
        report.add_section(Section("Same title"))
    report.add_section(Section("Same title", slug="same-title-2"))


def test_duplicate_figure_name_in_a_section_is_rejected():
    section = Section("Figures").add_figure(PNG_SIGNATURE, name="plot")
    with pytest.raises(ValueError, match="already has a figure named 'plot'"):
        section.add_figure(PNG_SIGNATURE, name="plot.png")


def test_table_row_of_the_wrong_length_is_rejected():
    with pytest.raises(ValueError, match=r"rows\[1\] has 1 values but there are 2 columns"):
        Section("Tables").add_table(rows=[[1, 2], [3]], columns=["a", "b"])


def test_out_dir_that_is_a_file_raises_oserror(tmp_path):
    target = tmp_path / "file"
    target.write_text("keep me")
    with pytest.raises(OSError):
        _example_report(target).write()
    assert target.read_text() == "keep me"
