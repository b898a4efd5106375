"""The tree stays easy to see: no module over 900 lines, no package a newcomer opens with more than 13 modules."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "explorer"
MAX_LINES = 900
MAX_MODULES = 13  # "about 12": the model planner's folder holds 13


def test_no_module_is_over_900_lines():
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these by responsibility: {long}"


def test_no_package_holds_more_than_13_modules():
    crowded = {}
    for pkg in [ROOT, *(p for p in ROOT.rglob("*") if p.is_dir() and (p / "__init__.py").exists())]:
        mods = [p for p in pkg.glob("*.py") if p.name != "__init__.py"]
        if len(mods) > MAX_MODULES:
            crowded[str(pkg.relative_to(ROOT.parent))] = len(mods)
    assert not crowded, f"give these packages subpackages: {crowded}"
