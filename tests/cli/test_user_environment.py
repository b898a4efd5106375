"""The user's environment: --json stays strict JSON whatever they set, and the closing lines say each variable
the tool removed or that changed what it measured. The CLI runs as a user runs it (a subprocess with that
environment), since the variables matter at process start."""

import csv
import json
import os
import subprocess
import sys

import pytest

DESC = "mb1ic8ih8oc8kh3ph1"
FAST = ["--budget-ms", "5", "--threads", "1"]
NOISY_ENV = {"ONEDNN_VERBOSE": "1", "DNNL_VERBOSE": "1", "PYTHONWARNINGS": "always", "TORCH_LOGS": "+dynamo"}


def _cli(args, extra_env, cwd):
    env = {k: v for k, v in os.environ.items() if k != "MKLDNN_EXPLORER_IN_PROCESS"}
    env.update(extra_env)
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("args,extra", [
    (["run", DESC, "--paths", "dense,mkldnn", *FAST, "--json"], NOISY_ENV),
    # PYTHONWARNINGS=error killed the measuring process at import (torch warns that script_method is deprecated)
    (["run", DESC, "--paths", "dense,mkldnn", *FAST, "--json"], {**NOISY_ENV, "PYTHONWARNINGS": "error"}),
    (["info", "--json"], NOISY_ENV),  # oneDNN's info lines came before the JSON
    (["model", "tiny", "--paths", "dense,mkldnn", "--modes", "nchw,to_mkldnn", "--mode-budget-ms", "5", *FAST,
      "--json"], NOISY_ENV),
], ids=["run", "run-warnings-as-errors", "info", "model"])
def test_json_is_strict_json_whatever_the_user_set(args, extra, tmp_path):
    done = _cli(args, extra, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)  # the whole of stdout, strictly
    assert out
    if args[0] == "run":
        assert [r["path"] for r in out["results"]] == ["dense", "mkldnn"]
        assert all(r["status"] == "ok" for r in out["results"])


def test_closing_lines_say_the_environment_and_the_compiled_row_says_it_ran_nothing(tmp_path):
    out = tmp_path / "env.csv"
    env = {"LD_PRELOAD": "libm.so.6", "ONEDNN_VERBOSE": "1", "PYTHONWARNINGS": "always",
           "TORCH_COMPILE_DISABLE": "1"}
    done = _cli(["run", DESC, "--paths", "dense,compiled", *FAST, "--csv", str(out)], env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    said = {k: [ln for ln in lines if k in ln and ("removed" in ln or "not applied" in ln or "is set" in ln)]
            for k in env}
    assert all(len(v) == 1 for v in said.values()), said  # one line each
    assert "LD_PRELOAD=libm.so.6 was removed from the measuring process" in said["LD_PRELOAD"][0]
    assert "ONEDNN_VERBOSE=1 was removed from the measuring process" in said["ONEDNN_VERBOSE"][0]
    assert not any(ln.startswith("onednn_verbose,") for ln in done.stdout.splitlines() + lines)
    with open(out, newline="") as f:
        rows = {r["path"]: r for r in csv.DictReader(f)}
    assert rows["dense"]["status"] == "ok"
    compiled = rows["compiled"]  # eager under TORCH_COMPILE_DISABLE=1: refused with why, never a timed row
    assert compiled["status"] == "unsupported" and "TORCH_COMPILE_DISABLE=1" in compiled["error"]
    assert not compiled["median_ms"] and "compiled it in" not in compiled["route_note"]

