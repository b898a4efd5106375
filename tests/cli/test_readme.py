"""The README's test command is what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_cmd = next(b.strip() for b in blocks if "pytest" in b and "venv" in b)
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_cmd.replace(" -q", "") in ci.replace(" -q", "")
    assert "torch==2.13.0" in test_cmd  # a bare torch requirement would pull a multi-GB CUDA build


DOCS = ROOT / "resources" / "docs"


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"README.md has no '## {heading}' section"
    return m.group(1)


def layout_modules(section: str) -> set[str]:
    """The modules the layout table names: each `name.py` in a row, in the row's package (its first cell)."""
    named = set()
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not cells[1].strip().startswith("`explorer"):
            continue
        package = cells[1].strip().strip("`")
        for name in re.findall(r"`([\w/]+\.py)`", "|".join(cells[2:])):
            named.add(package.rstrip("/") + "/" + name)
    return named


def test_layout_section_names_every_module_and_no_module_that_is_gone():
    """Issue 26 #2: the layout table omitted cli/model.py, the model planner, errors.py, files.py and gui views."""
    named = layout_modules(_section((ROOT / "README.md").read_text(), "Layout"))
    tree = {p.relative_to(ROOT).as_posix() for p in (ROOT / "explorer").rglob("*.py")
            if p.name != "__init__.py" and "__pycache__" not in p.parts}
    assert not tree - named, f"README.md's Layout section does not name: {sorted(tree - named)}"
    assert not named - tree, f"README.md's Layout section names modules that do not exist: {sorted(named - tree)}"


def test_layout_check_catches_a_missing_module():
    """The check itself can fail: a row without one of its package's modules leaves that module unnamed."""
    row = "| `explorer/core/trace/` | `onednn.py` |"
    assert layout_modules(row) == {"explorer/core/trace/onednn.py"}  # aten.py would be reported missing


def test_readme_is_short_with_the_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 250, "a newcomer reads the README in ten minutes: move detail to resources/docs/"
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert "mkldnn-explorer gui" in blocks[0] and "torch==2.13.0" in blocks[0]  # install and launch
    assert "pytest" in blocks[1] and "venv" in blocks[1]  # the test command, second
    assert "--index-url https://download.pytorch.org/whl/cpu" in readme  # how a CPU build is chosen elsewhere


def _pages():
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted(DOCS.glob("*.md"))]


def test_the_readme_links_every_page_and_every_relative_link_exists():
    readme = (ROOT / "README.md").read_text()
    for page in ("options.md", "method.md", "planner.md", "BENCHMARKS.md"):
        assert f"{page})" in readme, f"README.md links no {page}"
    assert sorted(DOCS.glob("*.md")), "resources/docs/ holds the pages the README links to"
    unlinked = [p.name for p in DOCS.glob("*.md") if f"resources/docs/{p.name})" not in readme]
    assert not unlinked, f"pages the README does not link: {unlinked}"
    broken = []
    for page in _pages():
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_every_benchmarks_section_cited_in_the_docs_exists():
    """Issue 26 #4: figures name their BENCHMARKS section; a cited section that does not exist is a false source."""
    headings = set(re.findall(r"^#{2,3} (\d+[a-z]?)\.", (ROOT / "BENCHMARKS.md").read_text(), re.M))
    cited = {}
    for page in _pages():
        for ref in re.findall(r"§(\d+[a-z]?)", page.read_text()):
            cited.setdefault(ref, page.relative_to(ROOT).as_posix())
    missing = {ref: page for ref, page in cited.items() if ref not in headings}
    assert cited and not missing, f"cited BENCHMARKS sections that do not exist: {missing}"


def test_cli_page_lists_the_csv_columns_in_order():
    """The CSV section (moved from the README to resources/docs/cli.md) names every column, in the file's order."""
    from explorer.core.report.results import CSV_COLUMNS

    text = _section((DOCS / "cli.md").read_text(), "CSV columns")
    listed = text.split("\n- ")[0]
    spans = re.findall(r"`([^`]+)`", " ".join(listed.split()))
    names = [n.strip() for span in spans for n in span.split(",") if n.strip() in CSV_COLUMNS]
    names = [n for i, n in enumerate(names) if n not in names[:i]]
    assert names == list(CSV_COLUMNS)


def test_model_page_lists_the_model_csv_columns():
    from explorer.core.model.model_csv import MODEL_COLUMNS_HEAD

    text = (DOCS / "planner.md").read_text()
    assert ", ".join(MODEL_COLUMNS_HEAD) in " ".join(text.split())
