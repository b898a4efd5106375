"""Issue #36 item 2: a model module whose library cannot import. timm beside the package index's CUDA
torchvision and the CPU torch fails in torchvision's own import ("operator torchvision::nms does not
exist"); main said "importing mymodels failed: RuntimeError: operator torchvision::nms does not exist",
naming neither timm nor torchvision's version nor what to do. Now: one sentence, exit 2, naming the
library chain, the failing one's version and the fix. Fake libraries in a temporary folder stand for timm
and torchvision (no timm needed)."""

import pytest
import torch

from explorer.cli import main

FAST = ["--input", "1,3,16,16", "--paths", "dense", "--budget-ms", "5", "--mode-budget-ms", "10", "--no-trace",
        "--threads", "1"]


def _write(folder, files: dict):
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture
def libs(tmp_path, monkeypatch):
    site = tmp_path  # the current folder: the measuring process (maybe started by an earlier test) looks there
    base = torch.__version__.split("+")[0]
    _write(site, {
        # what torchvision's _meta_registrations does; its C extension did not register the op (another
        # torch build), so torch raises, inside torch's own frames
        "torchvision/__init__.py": "import torch\ntorch.library.register_fake('torchvision::nms')(lambda *a: None)\n",
        "torchvision-0.28.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: torchvision\nVersion: 0.28.0\n"
                                                 f"Requires-Dist: torch=={base}\n",
        "timmlike_t/__init__.py": "import torchvision\n",
        "timmlike_t-1.0.31.dist-info/METADATA": "Metadata-Version: 2.1\nName: timmlike_t\nVersion: 1.0.31\n",
        "needsdep_t/__init__.py": "import nosuchdep_t\n",
        "brokenlib_t/__init__.py": "def f():\n    raise OSError('libfoo.so: cannot open shared object file')\nf()\n",
    })
    _write(tmp_path, {
        "models_tv_t.py": "import timmlike_t\ndef make():\n    pass\n",
        "models_dep_t.py": "import needsdep_t\ndef make():\n    pass\n",
        "models_broken_t.py": "import brokenlib_t\ndef make():\n    pass\n",
        "models_own_t.py": "raise ValueError('my own bug')\ndef make():\n    pass\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_sentence(capsys, model):
    code = main(["model", model, *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_a_library_whose_torchvision_is_another_build_is_named_with_version_and_fix(libs, capsys):
    err = _one_sentence(capsys, "models_tv_t:make")
    assert (f"importing models_tv_t failed: timmlike_t imports torchvision 0.28.0, which cannot load beside torch "
            f"{torch.__version__}: its C extension was built for another build of torch") in err
    assert "operator torchvision::nms does not exist" in err
    assert "pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu" in err


def test_a_library_missing_its_dependency_names_both(libs, capsys):
    err = _one_sentence(capsys, "models_dep_t:make")
    assert "importing models_dep_t failed: needsdep_t needs nosuchdep_t, which is not installed." in err
    (libs / "models_lib_t.py").write_text("import nosuchlib_t\n")
    err = _one_sentence(capsys, "models_lib_t:make")  # main: "no module named 'nosuchlib_t' (looked in ...)"
    assert err.endswith("importing models_lib_t failed: it imports nosuchlib_t, which is not installed.")


def test_a_library_failing_otherwise_is_named_and_the_users_own_bug_stays_as_it_was(libs, capsys):
    err = _one_sentence(capsys, "models_broken_t:make")
    assert "importing models_broken_t failed in brokenlib_t: OSError: libfoo.so: cannot open shared object" in err
    own = _one_sentence(capsys, "models_own_t:make")  # the user's module's own error: the sentence main gave
    assert own.endswith(": importing models_own_t failed: ValueError: my own bug"), own
