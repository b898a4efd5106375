"""Golden tables: `run`, `sweep`, `batch` and `model` print exactly these tables (and CSV headers).

Why: the safety net for no-behaviour-change restructurings (modules moving into subpackages). Each
case runs the real CLI in this process on a fixed fake measurement: every timed figure, interference
verdict, traced kernel and machine fact comes from the fakes below, derived from the path and spec
names only, so stdout is byte-identical run to run and on any CPU. Everything else (specs, planning,
statistics, ratios, tables, CSV schema) is the product's own code.

Golden files live in tests/cli/golden/. A missing one fails; `EXPLORER_WRITE_GOLDEN=1 pytest
tests/cli/test_tables_golden.py` (re)writes them: review the diff before committing it.
"""

from __future__ import annotations

import importlib
import os
import re
import statistics
import zlib
from pathlib import Path

import numpy as np
import pytest

# ---- every module path this test depends on: a module move updates this block only ------------------
# Patched where it is looked up: `from x import y` copies are patched in the importing module.
PATCH_TARGETS = {
    "explorer.core.jobs.run.measure_iter": "measure_iter",  # runner: `from harness import measure_iter`
    "explorer.core.measure.harness.measure": "measure",  # model, model_chained, model_drift import it when called
    "explorer.core.jobs.run.prepare": "prepare",  # runner: `from paths import prepare` (tags each path's fn)
    "explorer.core.paths.registry.prepare": "prepare",  # model_sequence, model_drift import it when called
    "explorer.core.model.chained.prepare_chained": "prepare_chained",  # measure_chained's global
    "explorer.core.jobs.run._add_trace": "add_trace",  # oneDNN verbose: kernel names depend on the ISA
    "explorer.core.jobs.run._add_aten": "add_aten",  # the profiler's call (CSV only; slow)
    "explorer.core.jobs.run._stored_bytes": "stored_bytes",  # oneDNN's blocked sizes depend on the ISA
    "explorer.core.measure.machine.peak": "peak",  # the machine's cached peak (and note_rate's cache writes)
    "explorer.core.model.modes.time_sequence": "time_sequence",  # modes: `from model.sequence import time_sequence`
    "explorer.core.model.modes.compare_outputs": "compare_outputs",  # real float error of a mode's output
    "explorer.core.model.modes._graph_conversion_ms": "graph_conversion_ms",  # profiler timing (jit_mkldnn)
    "explorer.core.model.modes.convs_in_forward_ms": "convs_in_forward_ms",  # modes: `from model.inplace import ...`
    "explorer.core.model.modes.forward_once_ms": "forward_once_ms",  # decides jit_mkldnn's conversion twins
}
USES = {  # read, never patched
    "main": "explorer.cli.main",
    "Measurement": "explorer.core.measure.harness.Measurement",
    "Progress": "explorer.core.measure.harness.Progress",
    "Interference": "explorer.core.measure.interference.Interference",
    "SequenceTiming": "explorer.core.model.sequence.SequenceTiming",
    "MODULE_NOTE": "explorer.core.model.inplace.MODULE_NOTE",
    "GRAPH_NOTE": "explorer.core.model.inplace.GRAPH_NOTE",
    "real_prepare": "explorer.core.paths.registry.prepare",
    "real_prepare_chained": "explorer.core.model.chained.prepare_chained",
}
ENV = {"MKLDNN_EXPLORER_IN_PROCESS": "1"}  # explorer.core.process.measuring: measure here, where the fakes are
# -----------------------------------------------------------------------------------------------------

GOLDEN = Path(__file__).parent / "golden"
SPEC = "mb2ic16ih14oc16oh14kh3ph1"
BATCH = """# golden batch: the *N counts weight the network total
mb2ic16ih14oc16oh14kh3ph1n"golden:conv3x3*3"
mb2ic16ih14oc32oh14kh1ph0n"golden:pointwise*2"
mb2ic16iw20oc16ow20kw3pw1n"golden:conv1d"   # 1-D: channels_last is an unsupported row
--dt=u8
mb2ic16ih14oc16oh14kh3ph1n"golden:int8"      # a refused line (its --dt is not honoured): exit 2
"""
EXIT = {"batch": 2, "batch_noisy": 2}  # a batch with a refused line runs the others, then exits 2 (cli.md)
MODEL_FAST = ["--budget-ms", "5", "--mode-budget-ms", "10"]
CASES = {  # name -> (argv, paths whose loops the fake meter calls noisy)
    "run": (["run", SPEC, "--paths", "all,mkldnn_prepacked", "--budget-ms", "5", "--csv", "{csv}"], ()),
    "run_noisy": (["run", SPEC, "--paths", "dense,mkldnn,mkldnn_roundtrip", "--budget-ms", "5"], ("mkldnn",)),
    "sweep": (["sweep", SPEC, "--vary", "g=1,2,3,16", "--paths", "dense,channels_last,mkldnn", "--budget-ms", "5",
               "--csv", "{csv}"], ()),
    "sweep_grid": (["sweep", SPEC, "--vary", "mb=1,2", "--vary", "ic=8,16", "--paths", "dense,mkldnn",
                    "--budget-ms", "5"], ("mkldnn",)),
    "batch": (["batch", "{batch}", "--paths", "dense,channels_last,mkldnn", "--budget-ms", "5", "--csv", "{csv}"], ()),
    "batch_noisy": (["batch", "{batch}", "--paths", "dense,channels_last,mkldnn", "--budget-ms", "5"], ("mkldnn",)),
    "model": (["model", "tiny", *MODEL_FAST, "--csv", "{csv}"], ()),
    "model_noisy": (["model", "tiny", "--paths", "dense,channels_last,mkldnn", *MODEL_FAST], ("channels_last",)),
}


def resolve(dotted: str):
    """The object at a dotted path (module, then attributes)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


# ---- the fixed fake measurement ---------------------------------------------------------------------
SPREAD_PCT = (0, 3, 1, 4, 2, 6, 5, 8, 7)  # each loop: 9 calls, this % above its base time, in call order


def base_ms(key: str) -> float:
    """A loop's base time per call: 0.05-1.0 ms, fixed by its key ("path desc dtype", "mode part", ...)."""
    return 0.05 + zlib.crc32(key.encode()) % 950 / 1000


def samples_ns(key: str) -> np.ndarray:
    b = base_ms(key)
    return np.array([round(b * 1e6 * (1 + p / 100)) for p in SPREAD_PCT], dtype=np.int64)


class Tagged:
    """A path's timed call, carrying the key its fake samples derive from."""

    def __init__(self, fn, key: str):
        self.fn, self.golden_key = fn, key

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class Fakes:
    def __init__(self, uses: dict, noisy):
        self.u, self.noisy = uses, set(noisy)

    def measurement(self, key: str):
        """The harness's own Measurement of fixed samples; the real interference.judge gives the verdict."""
        s = samples_ns(key)
        n, noisy = s.size, key.split()[0] in self.noisy
        meter = self.u["Interference"](samples=n, disturbed=n if noisy else 0, runq_wait_pct=35.0 if noisy else 0.0,
                                       faults_per_call=0.0, ctx_switches_per_call=0.0, cpu_pct=99.0, steal_pct=0.0,
                                       other_cpu_pct=0.0, slowdown_pct=0.0, loadavg=0.5, threads=1)
        return self.u["Measurement"](samples_ns=s, stop_reason="budget", wall_s=0.01, waits_ns=np.zeros(n, np.int64),
                                     interference=meter, min_samples=5, starts_ns=np.arange(n, dtype=np.int64),
                                     disturbed=np.full(n, noisy))

    def measure(self, fn, budget=None, cancel=None):
        return self.measurement(getattr(fn, "golden_key", "other loop"))

    def measure_iter(self, fn, budget=None, cancel=None, progress_interval_s=0.05, meter=True):
        m = self.measure(fn)
        yield self.u["Progress"](m.samples_ns, m.n, 0.01, 0.005)
        return m

    def prepare(self, name, t):
        prep = self.u["real_prepare"](name, t)
        prep.fn = Tagged(prep.fn, f"{name} {t.spec.desc} {t.spec.dtype}")
        if prep.compile_ms is not None:  # a route's real conversion/compile time
            prep.compile_ms = 12.5
        return prep

    def prepare_chained(self, t):
        prep = self.u["real_prepare_chained"](t)
        prep.fn = Tagged(prep.fn, f"{prep.name} {t.spec.desc} {t.spec.dtype}")
        return prep

    @staticmethod
    def add_trace(res, prep, out, groups):
        b = base_ms(f"{res.path} {res.spec.desc} {res.spec.dtype}")
        dnn = res.path != "native"  # native: PyTorch's own kernels, no oneDNN primitive
        res.conv_impl = "jit:fake_isa" if dnn else ""
        res.src_tag = res.wei_tag = res.dst_tag = "fake_tag" if dnn else ""
        res.reorder_count = int(dnn)
        res.trace_conv_ms, res.trace_reorder_ms = (0.6 * b, 0.1 * b) if dnn else (0.0, 0.0)
        res.onednn_ms, res.reorder_ms = res.trace_conv_ms, res.trace_reorder_ms

    @staticmethod
    def add_aten(res, prep):
        res.aten_ops = "aten::conv2d > fake"

    @staticmethod
    def stored_bytes(t):
        return None if t is None else t.numel() * t.element_size()  # logical size, whatever the blocking

    @staticmethod
    def peak(*args, **kwargs):
        return None

    def time_sequence(self, seq, budget_ms, min_samples, cancel, parts=None, minus=None, precision=None):
        """model_sequence.time_sequence's result, every column fixed by (mode, site, path, part)."""
        cols = [samples_ns(f"{path} site{k} {seq.mode}") / 1e6 for k, (_, path, _) in enumerate(seq.sites)]
        pooled: dict = {}
        for (li, path, _), col in zip(seq.sites, cols):
            pooled.setdefault((li, path), []).extend(col.tolist())
        named = {name: samples_ns(f"{seq.mode} {name}") / 1e6 for name in parts or {}}
        m = self.measurement(f"{seq.mode} round")
        return self.u["SequenceTiming"](
            total_ms=float(sum(np.median(c) for c in cols)), per_layer={k: statistics.median(v) for k, v in pooled.items()},
            passes=m.n, quality=m.quality, quality_reason=m.quality_reason, parts_ms=named, measurement=m, attempts=1)

    @staticmethod
    def compare_outputs(out, ref):
        return 1.5e-06, 2.5e-07  # (max abs error, relative): below the planner's tolerance

    @staticmethod
    def graph_conversion_ms(frozen, x, runs=5):
        return 0.0123

    @staticmethod
    def forward_once_ms(fn, runs=3):
        # a real call's time decided whether the conversions (0.0123 ms above) get twins in the rounds:
        # under SSE4.1 on a busy host, tiny's graph took over 0.615 ms now and then and the note changed
        return 0.1  # the conversions are 12% of it: twins in the rounds

    def convs_in_forward_ms(self, fn, model=None, graph=False, runs=5):
        return (0.0456, self.u["GRAPH_NOTE"]) if graph else (0.0345, self.u["MODULE_NOTE"])


@pytest.fixture
def fake_measurement(monkeypatch, tmp_path):
    """install(noisy=...) puts every fake in place; the real objects are read before any is patched."""

    def install(noisy=()):
        uses = {k: resolve(v) for k, v in USES.items()}
        fakes = Fakes(uses, noisy)
        for k, v in {**ENV, "MKLDNN_EXPLORER_CACHE": str(tmp_path / "cache")}.items():
            monkeypatch.setenv(k, v)
        for target, name in PATCH_TARGETS.items():
            monkeypatch.setattr(target, getattr(fakes, name))
        return uses

    return install


# ---- normalising and comparing ----------------------------------------------------------------------
# Two normalisations. `run`'s "max err" cells are the real convolution's float error against the
# reference, which differs by ISA (other kernels round differently). Only their shape is kept, so a format
# change still shows. They are the only d.de-dd cells in any output (model's, faked, are masked alike).
MAX_ERR = re.compile(r"(?<!\S)\d\.\de[+-]\d\d(?!\S)")
# jit_mkldnn's note counts the buffers its remainder is fed, one per blocked layout oneDNN chose: tiny's five
# outputs take 3 with AVX-512's 16-channel blocks, 4 with AVX2's 8 (model.jit._kind).
JIT_BUFFERS = re.compile(r"in \d+ buffers: one per shape")


def normalise(text: str) -> str:
    return JIT_BUFFERS.sub("in # buffers: one per shape", MAX_ERR.sub("#.#e?##", text))


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("EXPLORER_WRITE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.is_file(), f"{path} is missing: write it with EXPLORER_WRITE_GOLDEN=1, review it and commit it"
    assert text == path.read_text(), f"{name}: the output differs from the golden file"


@pytest.mark.parametrize("case", list(CASES))
def test_tables_and_csv_header_match_golden(case, fake_measurement, tmp_path, monkeypatch, capsys):
    argv, noisy = CASES[case]
    uses = fake_measurement(noisy)
    batch, out_csv = tmp_path / "golden_batch.txt", tmp_path / "out.csv"
    batch.write_text(BATCH)
    monkeypatch.chdir(tmp_path)
    code = uses["main"]([a.format(csv=out_csv, batch=batch) for a in argv])
    out = capsys.readouterr()
    assert code == EXIT.get(case, 0), out.err
    check_golden(f"{case}.txt", normalise(out.out))
    if "--csv" in argv:
        header = out_csv.read_text().splitlines()[0].split(",")
        check_golden(f"{case}.csv-header.txt", "\n".join(header) + "\n")


def test_the_fake_is_deterministic_and_noise_is_marked(fake_measurement, capsys):
    """Two runs of the same case print the same bytes; the noisy case carries its marks."""
    uses = fake_measurement(("mkldnn",))
    argv = ["run", SPEC, "--paths", "dense,mkldnn", "--budget-ms", "5"]
    outs = [(uses["main"](argv), capsys.readouterr().out) for _ in range(2)]
    assert outs[0] == outs[1] and outs[0][0] == 0
    assert "noisy" in outs[0][1] and "~" in outs[0][1] and outs[0][1].count("warning:") == 1


def test_batch_totals_over_noisy_rows_carry_the_mark(fake_measurement, tmp_path, monkeypatch, capsys):
    """Issue 26 #1: "42 of 42 rows are noisy", then `1.96x total, geomean 1.78x` printed plain. A total summing
    noisy rows is marked `~`; its speedup and geomean leave the noisy layers out and say so, in text and JSON."""
    import json

    uses = fake_measurement(("mkldnn",))
    batch = tmp_path / "golden_batch.txt"
    batch.write_text(BATCH)
    argv = ["batch", str(batch), "--paths", "dense,mkldnn", "--budget-ms", "5"]
    assert uses["main"](argv) == 2  # its int8 line is refused (named), the others run
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.lstrip().startswith("mkldnn") and "ms over" in x)
    assert "~" in line and "noisy" in line and "geomean" not in line and "x total" not in line
    assert uses["main"]([*argv, "--json"]) == 2
    total = json.loads(capsys.readouterr().out)["network_total"]
    mk = next(p for p in total["paths"] if p["path"] == "mkldnn")
    assert mk["noisy"] == mk["layers"] == 3 and mk["uncertain"] == 3 and mk["speedup"] is None
