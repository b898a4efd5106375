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
