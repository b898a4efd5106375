"""The option reference (resources/docs/options.md), generated from the argparse parsers so it cannot drift.

    python -m explorer.cli.reference            # print it
    python -m explorer.cli.reference --write    # rewrite resources/docs/options.md (what the test compares)

It walks the composed parser (explorer.cli.build_parser) and every subcommand's parser: each argument with
its value (metavar or choices), default and help, exactly as `--help` has them. tests/cli/test_reference.py
fails when the committed file differs from this output or misses an option that any `--help` prints.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources

from explorer.cli import build_parser  # the composed CLI: this module sits above it, as a tool over it

REGENERATE = "python -m explorer.cli.reference --write"


def reference_path():
    """resources/docs/options.md (shipped as explorer.resources; the source folder in an editable install)."""
    return resources.files("explorer.resources").joinpath("docs", "options.md")


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in sub._choices_actions}
    return [(name, helps.get(name, ""), p) for name, p in sub.choices.items()]


def _value(fmt: argparse.HelpFormatter, action: argparse.Action) -> str:
    if action.nargs == 0:  # a flag: store_true, store_const, version, help
        return ""
    if action.option_strings:
        return fmt._format_args(action, fmt._get_default_metavar_for_optional(action))
    return ""


def _default(action: argparse.Action) -> str:
    d = action.default
    if action.nargs == 0 or d is None or d is argparse.SUPPRESS or d == []:
        return ""
    return f"`{d}`"


def _table(parser: argparse.ArgumentParser) -> list[str]:
    fmt = parser._get_formatter()
    rows = ["| option | value | default | what it does |", "|---|---|---|---|"]
    for action in parser._actions:
        if action.help is argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            continue
        help_text = fmt._expand_help(action) if action.help else ""
        if action.option_strings:
            names = ", ".join(f"`{s}`" for s in action.option_strings)
        else:  # a positional: its metavar, as usage shows it
            names = f"`{fmt._format_args(action, action.dest)}` (positional)"
        value = _value(fmt, action)
        rows.append(f"| {names} | {_cell(f'`{value}`') if value else ''} | {_cell(_default(action))} | "
                    f"{_cell(help_text)} |")
    return rows


BENCHDNN_HEADING = "## benchdnn conv options on a line or in a batch"


def benchdnn_table() -> list[str]:
    """Every benchdnn conv option (explorer.core.problem.benchdnn_options.OPTIONS) and what the tool does with it."""
    from explorer.core.problem.benchdnn_options import OPTIONS

    rows = [BENCHDNN_HEADING, "",
            "What `run`, `sweep`, `batch`, `--list`, the window's field and a pasted line do with each option of "
            "benchdnn's conv driver (oneDNN's doc/driver_conv.md, knobs_attr.md, knobs_common.md). *honoured*: "
            "applied to what is timed; *default only*: the word restates benchdnn's default and changes nothing, "
            "any other value is refused; *some values*: the listed ones are honoured, the rest refused; *batch only*: "
            "honoured in a batch file, refused on a single line; *refused*: "
            "every value is refused. A refusal is one sentence naming the word (a batch: its line too) and what is "
            "timed without it; an unknown option is refused the same way. In a batch file a comma list makes one "
            "problem per value, each judged on its own.", "",
            "| option | status | honoured | otherwise, why | honoured example | refused example |",
            "|---|---|---|---|---|---|"]
    for o in OPTIONS:
        names = ", ".join(f"`--{n}`" for n in o.names)
        ex = [f"`{w}`" if w else "" for w in (o.honoured_example, o.refused_example)]
        rows.append(f"| {names} | {o.status} | {_cell(o.honoured)} | {_cell(o.why)} | {ex[0]} | {ex[1]} |")
    return rows


def generate(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference as markdown: the top-level options, then one section per subcommand."""
    parser = parser or build_parser()
    out = ["# Option reference", "",
           f"Generated from the command line's own parsers by `{REGENERATE}`: do not edit by hand.",
           "Every option of every `mkldnn-explorer COMMAND --help` is here, with its value, default and help.",
           "", "## `mkldnn-explorer`", ""]
    if parser.description:
        out += [_cell(parser.description), ""]
    out += _table(parser) + [""]
    subs = _subcommands(parser)
    out += ["Commands: " + ", ".join(f"[`{name}`](#mkldnn-explorer-{name})" for name, _, _ in subs) + ".", ""]
    for name, summary, p in subs:
        out += [f"## `mkldnn-explorer {name}`", ""]
        texts = [summary] + [t for t in (p.description, p.epilog) if t and t != summary]
        out += [x for t in texts if t for x in (_cell(t), "")]
        out += _table(p) + [""]
    out += benchdnn_table()
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m explorer.cli.reference", description=__doc__.splitlines()[0],
                                 allow_abbrev=False)
    ap.add_argument("--write", action="store_true", help="rewrite resources/docs/options.md instead of printing")
    args = ap.parse_args(argv)
    text = generate()
    if args.write:
        path = reference_path()
        with resources.as_file(path) as p:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
            print(f"wrote {p}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
