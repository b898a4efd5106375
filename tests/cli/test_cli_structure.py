"""The command line is a package with one module per command group and no import circle."""

import ast
from pathlib import Path

import explorer.cli

CLI = Path(explorer.cli.__file__).parent


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_command_modules_import_only_common_from_the_cli():
    for f in CLI.glob("*.py"):
        if f.name == "__init__.py":
            continue
        if f.name == "reference.py":  # not a command: the option reference, generated from the composed parser
            assert {n for n in _imports(f) if n.startswith("explorer.cli")} == {"explorer.cli", "explorer.cli.build_parser"}
            continue
        cli_imports = {n for n in _imports(f) if n.startswith("explorer.cli")}
        assert cli_imports <= {"explorer.cli.common"} | {f"explorer.cli.common.{x}" for x in dir(__import__("explorer.cli.common", fromlist=["x"]))}, (f.name, cli_imports)


def test_every_command_has_one_handler():
    from explorer.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    # `gui` is parsed by the CLI but run by explorer.launch, the one module that may import the window.
    assert set(sub.choices) == set(COMMANDS) | {"gui"} and "gui" not in COMMANDS


def test_the_console_script_runs_gui_through_the_launcher_and_the_cli_alone_refuses_it(capsys):
    from explorer.cli import main

    assert main(["gui", "--size", "big"]) == 2
    assert "mkldnn-explorer gui" in capsys.readouterr().err
