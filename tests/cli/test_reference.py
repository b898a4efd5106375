"""Issue 26: the option reference (resources/docs/options.md) is generated from the parsers and cannot drift.

Each test names the command that regenerates the file, so a developer who added an option knows what to run.
"""

import argparse
import re
from pathlib import Path

from explorer.cli import build_parser
from explorer.cli.reference import REGENERATE, generate

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "resources" / "docs" / "options.md"
FIX = f"run `{REGENERATE}` (from the repo, in its venv) and commit resources/docs/options.md"


def _subparsers(parser):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _help_options(help_text: str) -> set[str]:
    """Every option string an argparse --help lists (its option lines: two spaces, then `-x, --xx VALUE`)."""
    found = set()
    for line in help_text.splitlines():
        m = re.match(r"^  (-\S.*?)(?:\s{2,}|$)", line)
        if m:
            found.update(tok.split()[0] for tok in m.group(1).split(", "))
    return found


def _section(reference: str, command: str) -> str:
    m = re.search(rf"^## `mkldnn-explorer {re.escape(command)}`\n(.*?)(?=^## |\Z)", reference, re.M | re.S)
    return m.group(1) if m else ""


def missing_options(parser, reference: str) -> list[str]:
    """`COMMAND --opt` for every option a --help prints that the command's section of the reference lacks."""
    missing = [f"mkldnn-explorer {o}" for o in sorted(_help_options(parser.format_help()))
               if f"`{o}`" not in _section_top(reference)]
    for name, p in _subparsers(parser).items():
        section = _section(reference, name)
        missing += [f"mkldnn-explorer {name} {o}" for o in sorted(_help_options(p.format_help()))
                    if f"`{o}`" not in section]
    return missing


def _section_top(reference: str) -> str:
    return reference.split("\n## `mkldnn-explorer run`")[0]


def test_every_option_of_every_help_is_in_the_committed_reference(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert REFERENCE.is_file(), f"resources/docs/options.md is missing: {FIX}"
    missing = missing_options(build_parser(), REFERENCE.read_text(encoding="utf-8"))
    assert not missing, f"options missing from the reference: {', '.join(missing)}; {FIX}"


def test_the_committed_reference_is_the_generated_one():
    assert REFERENCE.is_file(), f"resources/docs/options.md is missing: {FIX}"
    assert REFERENCE.read_text(encoding="utf-8") == generate(), f"resources/docs/options.md is stale: {FIX}"


def test_the_check_catches_a_new_option():
    """The check itself can fail: a parser with one more option than the reference is reported by name."""
    parser = build_parser()
    _subparsers(parser)["run"].add_argument("--brand-new-option", action="store_true", help="not documented")
    assert missing_options(parser, REFERENCE.read_text(encoding="utf-8")) == ["mkldnn-explorer run --brand-new-option"]
    assert "`--brand-new-option`" in _section(generate(parser), "run")  # and the generator picks it up


def test_the_reference_names_every_choice_and_builtin():
    text = REFERENCE.read_text(encoding="utf-8")
    assert "`{run,sweep,roofline,compare,model}`" in _section(text, "gui")  # --tab's choices, as --help has them
    from explorer.core.model.zoo import BUILTINS

    model_help = _subparsers(build_parser())["model"].format_help()
    assert all(name in model_help for name in BUILTINS), "model --help names every built-in network"
