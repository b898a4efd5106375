"""The fresh-script check of a row: the standalone script the README describes for that row (the printed
allocator variables, the same seeded tensors, spec, dtype and threads, torch.utils.benchmark), written to a
file the user can rerun, run in a fresh Python process, and its median set beside the row's with the ratio.

A row whose median is more than TOLERANCE away from the script's says "not reproduced in a fresh script"
with both figures (`verify_note`), but only when both figures are trusted: the row is not noisy, and the
script's own spread (IQR) is within TOLERANCE while other programs and the hypervisor left the machine alone
(the interference meter's limits). A disturbed script figure is measured again (SCRIPT_ATTEMPTS in all); if
none is trusted, or the row itself is noisy, the check says "~0.03x uncertain in a fresh script", never
"not reproduced". The script imports only torch: it runs on a machine without this tool.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.core.errors import InputError
from explorer.core.measure.allocator import ALLOCATORS, env_for, reproduce_hint
from explorer.core.report.results import Result

TOLERANCE = 0.10  # beyond +-10% the row is not reproduced
MARKER = "# mkldnn-explorer fresh-script check"  # first line of every script this module writes
TIMEOUT_S = 600
VERIFIABLE = ("dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip")
NOT_REPRODUCED = "not reproduced in a fresh script"
UNCERTAIN = "uncertain in a fresh script"  # after "~ratio": a disagreement on a figure that is not trusted
SCRIPT_ATTEMPTS = 3  # a disturbed script figure is measured again, this many runs of the script in all
SPREAD_MAX = TOLERANCE  # a script whose IQR is wider than the tolerance cannot tell within it

# The README's statements (section "Allocator"), made once before the Timer and passed in its globals.
_PATH_SETUP = {
    "dense": ("", "CONV(x, w, b, **args)"),
    "channels_last": ("xc, wc = x.contiguous(memory_format=CL), w.contiguous(memory_format=CL)",
                      "CONV(xc, wc, b, **args)"),
    "native": ("torch.backends.mkldnn.enabled = False", "CONV(x, w, b, **args)"),
    "mkldnn": ("fwd = torch.utils.mkldnn.to_mkldnn(conv, DT).forward\nxm = x.to_mkldnn()", "fwd(xm)"),
    "mkldnn_functional": ("xm = x.to_mkldnn()", "CONV(xm, w, b, **args)"),
    "mkldnn_roundtrip": ("fwd = torch.utils.mkldnn.to_mkldnn(conv, DT).forward", "fwd(x.to_mkldnn()).to_dense()"),
}
_DTYPES = {"f32": "torch.float32", "bf16": "torch.bfloat16", "f16": "torch.float16"}
_NDIMS = {3: ("Conv1d", "F.conv1d", None), 4: ("Conv2d", "F.conv2d", "torch.channels_last"),
          5: ("Conv3d", "F.conv3d", "torch.channels_last_3d")}


@dataclass
class ScriptFigure:
    """What one run of the fresh script measured, and what may have disturbed it."""

    median_ms: float
    iqr_ms: float | None = None  # None from a script that does not print it (one written before it did)
    host: str = ""  # why the machine was not quiet while it ran ("" when it was, or when unknown)

    @property
    def doubt(self) -> str:
        """Why this figure is not trusted ('' when it is)."""
        why = []
        if self.iqr_ms is not None and self.median_ms > 0 and self.iqr_ms / self.median_ms > SPREAD_MAX:
            why.append(f"its own spread is {100 * self.iqr_ms / self.median_ms:.0f}% of its median (IQR)")
        if self.host:
            why.append(self.host)
        return " and ".join(why)


@dataclass
class Verified:
    """The fresh script's figure for one row."""

    script: str  # where the script was written (rerun it with `command`)
    command: str
    median_ms: float | None = None
    ratio: float | None = None  # row median / script median
    note: str = ""  # "" when reproduced; else NOT_REPRODUCED or "~ratio UNCERTAIN" with both figures, or why none
    doubt: str = ""  # why a disagreement is no verdict: the row is noisy or the script's figure was disturbed
    attempts: int = 1  # runs of the script behind the figure

    @property
    def reproduced(self) -> bool:
        return self.ratio is not None and abs(self.ratio - 1.0) <= TOLERANCE


def _allocator(res: Result) -> str:
    """The row's allocator setting; a row measured in a process of unknown state gets glibc as it comes."""
    return res.allocator if res.allocator in ALLOCATORS else "default"


def verifiable(res: Result) -> str:
    """'' when the row can be checked, else one sentence why not."""
    if res.status != "ok" or not res.median_ms:
        return "the row has no median to check"
    if res.path not in VERIFIABLE:
        return f"no fresh-script check for {res.path} (only {', '.join(VERIFIABLE)})"
    if res.spec.ndims == 3 and res.path == "channels_last":
        return "channels_last has no 1-D memory format"
    if res.spec.backward:  # the fresh script times the forward conv: it would check another problem
        return f"no fresh-script check for a backward direction ({res.spec.direction}): the script times the forward"
    if res.spec.post_ops:  # the fresh script times the plain conv: its figure would not be this row's
        return f"the fresh script times the conv without its post-ops ({res.spec.post_ops}), so it cannot check this row"
    return ""


def script_text(res: Result, min_run_time: float = 0.5) -> str:
    """The standalone torch.utils.benchmark script for this row (only torch imported)."""
    s = res.spec
    mod, conv_name, cl = _NDIMS[s.ndims]
    pad, extra = s.torch_padding()
    extra = tuple(extra) if any(extra) else None
    setup, stmt = _PATH_SETUP[res.path]
    x_in = f"F.pad(x, {list(extra)})" if extra else "x"
    if extra and res.path in ("mkldnn", "mkldnn_functional"):
        setup = setup.replace("xm = x.to_mkldnn()", f"xm = {x_in}.to_mkldnn()")  # padded once, as the tool does
    stmt = stmt.replace("CONV(x,", f"CONV({x_in},").replace("fwd(x.to_mkldnn())", f"fwd({x_in}.to_mkldnn())")
    stmt = stmt.replace("CONV", conv_name)
    setup = setup.replace("CL", cl or "None").replace("DT", "dt")
    threads = res.threads or 1
    return f'''{MARKER}: {s.descriptor()} {res.path} {s.dtype}, {threads} threads, allocator {_allocator(res)}
# The row measured {res.median_ms:.6g} ms. Rerun:
#   {reproduce_hint(_allocator(res)).replace("your_script.py", "THIS_FILE")}
import json
import math

import torch
import torch.nn.functional as F
import torch.utils.benchmark as tb
import torch.utils.mkldnn

torch.set_grad_enabled(False)
torch.set_num_threads({threads})
dt = {_DTYPES[s.dtype]}
# The tool's seeded problem: weights uniform in +-1/sqrt(fan_in), then the input, rounded once to dt.
gen = torch.Generator().manual_seed(0)
conv = torch.nn.{mod}({s.ic}, {s.oc}, {s.kernel_size}, stride={s.torch_stride}, padding={tuple(pad)},
                     dilation={s.torch_dilation}, groups={s.g}, bias={s.bias})
bound = 1.0 / max(1, {s.ic // s.g} * {math.prod(s.kernel_size)}) ** 0.5
conv.weight.uniform_(-bound, bound, generator=gen)
if conv.bias is not None:
    conv.bias.uniform_(-bound, bound, generator=gen)
conv.requires_grad_(False).eval()
x = torch.randn({s.input_shape}, generator=gen).to(dt)
w = conv.weight.detach().to(dt)
b = conv.bias.detach().to(dt) if conv.bias is not None else None
conv.weight.copy_(w.float())
if conv.bias is not None:
    conv.bias.copy_(b.float())
args = dict(stride={s.torch_stride}, padding={tuple(pad)}, dilation={s.torch_dilation}, groups={s.g})
{setup}
t = tb.Timer(stmt={stmt!r}, globals=dict(globals()), num_threads={threads})
t.timeit(3)  # warm-up: primitive creation, a ScriptModule's first runs
m = t.blocked_autorange(min_run_time={min_run_time})
print(m)
print(json.dumps({{"median_ms": m.median * 1e3, "iqr_ms": m.iqr * 1e3}}))
'''


def script_name(res: Result) -> str:
    s = res.spec
    desc = re.sub(r"[^A-Za-z0-9_.-]+", "_", s.descriptor(with_name=False))
    return f"verify-{desc}-{res.path}-{s.dtype}-t{res.threads or 1}.py"


def write_script(res: Result, folder: str | os.PathLike, min_run_time: float = 0.5) -> Path:
    """Write the row's script into `folder` (made if absent). Never replaces a file this module did not write."""
    folder = Path(folder).absolute()  # the script runs with its folder as cwd: a relative path would be doubled
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the fresh scripts' folder {folder}: "
                         f"{exc.strerror or exc}; choose another folder or remove what is there.",
                         "verify") from None
    path = folder / script_name(res)
    if path.exists() or path.is_symlink():
        own = path.is_file() and not path.is_symlink() and _starts_with_marker(path)
        if not own:
            raise InputError(f"{path} exists and is not a script this tool wrote; remove it or choose another folder.",
                             "verify")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(script_text(res, min_run_time))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write the fresh script into {folder}: {exc.strerror or exc}; "
                         "choose a folder you can write to.", "verify") from None
    return path


def _starts_with_marker(path: Path) -> bool:
    try:
        with open(path) as f:
            return f.readline().startswith(MARKER)
    except (OSError, UnicodeDecodeError):
        return False


def run_script(path: str | os.PathLike, allocator: str, python: str | None = None,
               timeout_s: float = TIMEOUT_S) -> ScriptFigure:
    """Run a written script in a fresh process started with the allocator's variables: its median and IQR in
    ms, and whether other programs or the hypervisor disturbed the machine while it ran."""
    from explorer.core.measure.interference import cpu_ticks
    from explorer.core.measure.user_env import measuring_env

    env = dict(os.environ)
    # as the row's measuring process ran: no verbose oneDNN or warning settings of the user's (user_env)
    for k, v in {**measuring_env(), **env_for(allocator)}.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    env.pop("MKLDNN_EXPLORER_ALLOCATOR", None)  # the user's script is not the tool's process
    path = Path(path).absolute()  # run with its folder as cwd: the path must not be relative to ours
    before = (time.monotonic_ns(), cpu_ticks(), _cpu_ns(resource.RUSAGE_CHILDREN), _cpu_ns(resource.RUSAGE_SELF))
    p = subprocess.run([python or sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=timeout_s,
                       cwd=str(Path(path).parent))
    after = (time.monotonic_ns(), cpu_ticks(), _cpu_ns(resource.RUSAGE_CHILDREN), _cpu_ns(resource.RUSAGE_SELF))
    if p.returncode:
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the fresh script failed: {last}")
    got = json.loads(p.stdout.strip().splitlines()[-1])
    iqr = got.get("iqr_ms")
    return ScriptFigure(float(got["median_ms"]), float(iqr) if isinstance(iqr, (int, float)) else None,
                        host_disturbance(before, after))


def _cpu_ns(who: int) -> int:
    ru = resource.getrusage(who)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def host_disturbance(before: tuple, after: tuple) -> str:
    """Why the machine was not quiet between two (wall ns, (busy, steal) ticks, children's CPU ns, own CPU ns)
    readings around the script, by the limits a row's loop is judged with; '' when quiet or unknown."""
    from explorer.core.measure.interference import MAX_OTHER_CPU_PCT, MAX_STEAL_PCT, TICK_NS

    (w0, t0, c0, o0), (w1, t1, c1, o1) = before, after
    if t0 is None or t1 is None:
        return ""
    cpus = os.cpu_count() or 1
    wall = max(1, w1 - w0) * cpus
    slack = 2 * cpus * TICK_NS  # each CPU's count can be off by one tick at either end
    steal = 100.0 * max(0, (t1[1] - t0[1]) * TICK_NS - slack) / wall
    if steal > MAX_STEAL_PCT:
        return f"the hypervisor took {steal:.0f}% of the CPUs' time while it ran (steal)"
    other = 100.0 * max(0, (t1[0] - t0[0]) * TICK_NS - (c1 - c0) - (o1 - o0) - slack) / wall
    if other > MAX_OTHER_CPU_PCT:
        return f"other programs used {other:.0f}% of the machine's CPU time while it ran"
    return ""


def judge(res: Result, script: Path, figure: ScriptFigure, attempts: int = 1) -> Verified:
    """Reproduced within TOLERANCE; else "not reproduced" when both figures are trusted, "~ratio uncertain"
    when the row is noisy or the script's figure was disturbed."""
    median_ms = figure.median_ms
    ratio = res.median_ms / median_ms if median_ms > 0 else None
    v = Verified(str(script), _command(res, script), median_ms, ratio, attempts=attempts)
    if v.reproduced:
        return v
    if ratio is None:
        v.note = f"{NOT_REPRODUCED}: the script measured no time"
        return v
    why = []
    if getattr(res, "quality", "") == "noisy":
        why.append(f"the row itself is noisy ({res.quality_reason or 'another program disturbed it'})")
    if figure.doubt:
        tries = f" in {attempts} runs" if attempts > 1 else ""
        why.append(f"the script's figure was disturbed{tries}: {figure.doubt}")
    figures = f"the row {res.median_ms:.4g} ms, the script {median_ms:.4g} ms"
    if why:
        v.doubt = "; ".join(why)
        v.note = f"~{ratio:.2f}x {UNCERTAIN}: {figures}, but {v.doubt}; check again on a quieter machine"
    else:
        v.note = f"{NOT_REPRODUCED}: {figures} ({ratio:.2f}x)"
    return v


def _command(res: Result, script: Path) -> str:
    return reproduce_hint(_allocator(res)).replace("your_script.py", str(script)).split(" (")[0]


def verify(res: Result, folder: str | os.PathLike, min_run_time: float = 0.5, python: str | None = None) -> Verified:
    """Write, run and judge the fresh script of one row; the row gets the verify_* fields."""
    v = check(res, folder, min_run_time, python)
    apply(res, v)
    return v


def check(res: Result, folder: str | os.PathLike, min_run_time: float = 0.5, python: str | None = None) -> Verified:
    """verify without touching the row (for a worker thread: the window applies it in its own)."""
    why = verifiable(res)
    if why:
        v = Verified("", "", note=why)
    else:
        script = write_script(res, folder, min_run_time)
        try:
            for attempt in range(1, SCRIPT_ATTEMPTS + 1):
                figure = run_script(script, _allocator(res), python)
                v = judge(res, script, figure, attempt)
                if v.reproduced or not figure.doubt:
                    break  # a trusted script figure: another run cannot change the verdict (nor the row's noise)
        except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
            v = Verified(str(script), _command(res, script), note=f"the fresh script gave no figure: {exc}")
    return v


def apply(res: Result, v: Verified) -> None:
    res.verify_median_ms, res.verify_ratio, res.verify_script, res.verify_note = v.median_ms, v.ratio, v.script, v.note


def check_folder(csv_path: str | None) -> Path:
    """The scripts' folder of a run (default_folder), refused before any work when it cannot be made or
    written (read-only, a file in its place): one sentence naming the folder and what moves it. The folder
    is not made here: a run that fails first leaves nothing behind."""
    folder = default_folder(csv_path)
    if csv_path:
        how = "give --csv in a writable folder (the scripts go next to the CSV) or remove what is there"
    else:
        how = ("it is the cache folder's (MKLDNN_EXPLORER_CACHE, else ~/.cache/mkldnn-explorer): set "
               "MKLDNN_EXPLORER_CACHE to a writable folder, or give --csv (the scripts then go next to the CSV)")
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    why = ""
    if probe.is_symlink() or not probe.is_dir():
        why = "a file is in the way" if probe == folder else f"{probe} is not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        import errno

        try:  # say why as the system does: read-only file system, permission denied
            os.close(os.open(probe / f".verify-probe-{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(probe / f".verify-probe-{os.getpid()}")
        except OSError as exc:
            why = exc.strerror or os.strerror(exc.errno or errno.EACCES)
        # else: the system lets this process write there (an ACL access() does not see): go on
    if why:
        raise InputError(f"cannot write the fresh scripts' folder {folder} ({why}); {how}.", "verify")
    return folder


def default_folder(csv_path: str | None) -> Path:
    """Next to the CSV (`<name>-verify/`), else the cache folder's `verify/`."""
    if csv_path:
        p = Path(csv_path).absolute()  # resolved once: the scripts run with this folder as their cwd
        return p.with_name(p.stem + "-verify")
    from explorer.core.measure.host import cache_dir

    return cache_dir() / "verify"
