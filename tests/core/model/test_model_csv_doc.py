"""Issue #37: planner.md says what each model CSV column holds, and its tables name exactly the writer's
columns: the planner's own ones (in the writer's order), the run CSV's ones a mode row fills, and the rest
the run CSV's as cli.md lists them; none missing, none the writer does not write. main's page said a mode
row's `rel_err` was predicted against measured, where the column holds the output's error against NCHW."""

import re
from pathlib import Path

from explorer.core.model.model_csv import MODEL_COLUMNS_HEAD, model_columns
from explorer.core.report.results import CSV_COLUMNS

DOCS = Path(__file__).resolve().parents[3] / "resources" / "docs"


def _section(text: str, heading: str) -> str:
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def _tables(section: str) -> list[list[tuple[list[str], str]]]:
    """Each markdown table: per row, the column names in its first cell and the rest of the row."""
    tables, rows = [], []
    for line in section.splitlines() + [""]:
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            names = re.findall(r"`([^`]+)`", cells[0])
            if names:  # not the header row
                rows.append((names, " | ".join(cells[1:])))
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def test_the_model_csv_tables_name_exactly_the_writers_columns():
    section = _section((DOCS / "planner.md").read_text(), "The model CSV")
    own, mode_fills = _tables(section)[:2]
    own_names = [n for names, _ in own for n in names]
    assert own_names == list(MODEL_COLUMNS_HEAD)  # each of the planner's columns, in the file's order
    filled = [n for names, _ in mode_fills for n in names]
    assert set(filled) <= set(CSV_COLUMNS) - set(MODEL_COLUMNS_HEAD), set(filled) - set(CSV_COLUMNS)
    assert "cli.md#csv-columns" in section  # the rest: the run CSV's, whose list test_readme checks in order
    documented = set(own_names) | set(CSV_COLUMNS)
    assert documented == set(model_columns())


def test_the_page_says_rel_err_is_the_output_error_against_nchw():
    section = _section((DOCS / "planner.md").read_text(), "The model CSV")
    own = dict((names[0], what) for names, what in _tables(section)[0])
    assert "error against the model as it is" in own["rel_err"] and "Not predicted against measured" in own["rel_err"]
    assert "predicted against measured" not in section.replace("Not predicted against measured", "")
