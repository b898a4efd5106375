"""Issue 32: the options page lists every benchdnn conv option with what the tool does with it, and the table
agrees with the rule the code applies (option_refusal), row by row."""

import re
from pathlib import Path

import pytest

from explorer.cli.reference import BENCHDNN_HEADING, REGENERATE
from explorer.core.problem.benchdnn_options import OPTIONS
from explorer.core.problem.spec import option_refusal

REFERENCE = Path(__file__).resolve().parents[2] / "resources" / "docs" / "options.md"
# Every conv option of oneDNN's benchdnn docs (doc/driver_conv.md, knobs_attr.md, knobs_common.md at commit
# 515bfba), written out here so a catalogue that loses one fails.
BENCHDNN_CONV_OPTIONS = {
    "dir", "dt", "cfg", "stag", "wtag", "dtag", "strides", "bia-dt", "bia_dt", "alg", "mb", "match",
    "attr-scratchpad", "attr-fpmath", "attr-acc-mode", "attr-rounding-mode", "attr-deterministic", "attr-dropout",
    "attr-scales", "attr-zero-points", "attr-post-ops",
    "reset", "batch", "allow-enum-tags-only", "attr-same-pd-check", "canonical", "check-ref-impl", "cold-cache",
    "cpu-isa-hints", "ctx-exe", "ctx-init", "engine", "execution-mode", "fast-ref", "fix-times-per-prb", "impl",
    "max-ms-per-prb", "mem-check", "memory-kind", "mode", "mode-modifier", "num-streams", "perf-template",
    "repeats-per-prb", "skip-impl", "start", "stream-kind", "summary", "verbose",
}


def table_rows() -> list[dict]:
    text = REFERENCE.read_text(encoding="utf-8")
    assert BENCHDNN_HEADING in text, f"the options page has no benchdnn table: run `{REGENERATE}`"
    section = text.split(BENCHDNN_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 6 or cells[0] in ("option", "---"):
            continue
        rows.append({"names": re.findall(r"`--([^`=]+)`", cells[0]), "status": cells[1],
                     "honoured": cells[4].strip("`"), "refused": cells[5].strip("`")})
    return rows


def test_the_table_lists_every_benchdnn_conv_option_and_every_option_the_code_knows():
    in_table = {n for r in table_rows() for n in r["names"]}
    assert BENCHDNN_CONV_OPTIONS <= in_table, sorted(BENCHDNN_CONV_OPTIONS - in_table)
    assert {n for o in OPTIONS for n in o.names} == in_table


@pytest.mark.parametrize("row", table_rows(), ids=lambda r: r["names"][0])
def test_each_row_is_classified_as_option_refusal_classifies_it(row):
    status, ok, bad = row["status"], row["honoured"], row["refused"]
    assert status in ("honoured", "batch only", "some values", "default only", "refused")
    assert bool(ok) == (status != "refused") and bool(bad) == (status not in ("honoured", "batch only"))
    if ok:
        assert option_refusal(ok, in_batch=True) == "", ok
        assert (option_refusal(ok) == "") == (status != "batch only"), ok  # a single line: batch words refused
    if bad:
        why = option_refusal(bad, in_batch=True)
        assert why.startswith(f"{bad}: ") and len(why.rstrip(".").split(". ")) == 1, why  # one sentence, named
    if status == "refused":
        for name in row["names"]:
            assert option_refusal(f"--{name}=1", in_batch=True), name  # no value of it is honoured
    if status == "default only":
        for name in row["names"]:
            assert option_refusal(f"--{name}=something_else", in_batch=True), name


def test_an_option_outside_the_table_is_refused_by_name():
    assert option_refusal("--bogus-option=1", in_batch=True).startswith("--bogus-option=1: unknown benchdnn option")
