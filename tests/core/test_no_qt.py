"""The core never imports Qt: import every explorer.core module in a fresh interpreter and check."""

import pkgutil
import subprocess
import sys

import explorer.core

QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")


def test_core_modules_load_no_qt():
    names = sorted(m.name for m in pkgutil.walk_packages(explorer.core.__path__, "explorer.core."))
    assert "explorer.core.session.store" in names and "explorer.core.jobs.run" in names
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "print('QT:' + ','.join(bad))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("QT:")][-1]
    assert line == "QT:", f"explorer.core imported Qt modules: {line[3:]}"


def test_cli_run_loads_no_qt():
    code = (
        "import sys\n"
        "from explorer.cli import main\n"
        "rc = main(['run', 'mb1ic4ih6oc4kh3ph1', '--paths', 'dense', '--budget-ms', '5', '--json'])\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "print('QT:' + ','.join(bad))\n"
        "sys.exit(rc)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "QT:"
