"""What the planner reports: the modes and their names, the options, the events of iter_model
(ModelStarted, ModeStarted, ModeFinished, ModelFinished), a mode's result (ModeResult), a layer's
(LayerSummary), the whole report (ModelReport) and the one-line answer. Types the CLI and the GUI read."""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.core.errors import InputError
from explorer.core.model.inventory import Inventory, Layer

MODES = ("nchw", "channels_last", "to_mkldnn", "jit_mkldnn", "compiled", "autocast_bf16", "int8")
# What a plan runs unless asked: today's modes are opt-in (`--modes all`, or named), as torch.compile takes
# tens of seconds on a real network and autocast changes the numbers the model computes.
DEFAULT_MODES = ("nchw", "channels_last", "to_mkldnn", "jit_mkldnn")
BF16_MODES = ("autocast_bf16",)  # modes that compute in bf16 whatever the plan's dtype
MODE_HELP = {
    "nchw": "the model as it is (contiguous NCHW)",
    "channels_last": "model and input in torch.channels_last (input converted inside each forward)",
    "to_mkldnn": "torch.utils.mkldnn.to_mkldnn(model); x.to_mkldnn() in and .to_dense() out, per forward",
    "jit_mkldnn": "torch.jit.freeze + torch.jit.optimize_for_inference (PyTorch's own route to MKLDNN layouts)",
    "compiled": "torch.compile (inductor, freezing on); compiled before the timed loop, compile time apart",
    "autocast_bf16": "torch.autocast('cpu', torch.bfloat16) on the channels_last model (on the model as it is "
                     "when its convs are 1-D, which have no channels-last format)",
    "int8": "PT2E int8 (torchao's X86InductorQuantizer, calibrated on the example input) + torch.compile "
            "(freezing); needs the `int8` extra",
}
MODE_PATH = {"nchw": "dense", "channels_last": "channels_last", "to_mkldnn": "mkldnn", "jit_mkldnn": "mkldnn",
             "compiled": "compiled", "autocast_bf16": "channels_last", "int8": "int8"}
MODE_LABEL = {"nchw": "model as it is", "channels_last": "channels_last", "to_mkldnn": "to_mkldnn(model)",
              "jit_mkldnn": "jit.freeze+optimize_for_inference", "compiled": "torch.compile (freezing)",
              "autocast_bf16": "autocast bf16 (channels_last)", "int8": "PT2E int8 (compiled)"}
DEFAULT_MODE_BUDGET_MS = 2000.0
# The per-layer table's loops stop once a median is known to +-2% (95% interval): the planner judges its
# prediction at +-10% end to end, and `run`'s 0.5% kept every quiet loop to its full budget, most of the time
# to a verdict (BENCHMARKS section 18). A noisy loop never converges, so it still runs to its budget.
PLANNER_PRECISION = 0.02
# ... and may stop once a tenth of their budget has passed, not run's fifth: at 2% a loop has converged by
# then, and the table's 161 loops of ResNet-50 each ran 75 ms where 30 ms decide them (BENCHMARKS section 18)
PLANNER_EARLIEST_SHARE = 0.1


def mode_path(r: ModeResult) -> str:
    """The per-layer path a mode's convs run on: MODE_PATH's, unless the mode ran them on another one here
    (autocast_bf16 on a model of 1-D convs: the model as it is, so dense)."""
    return r.conv_path or MODE_PATH[r.mode]


def mode_label(r: ModeResult) -> str:
    """The mode's name in a table or a line, saying which memory format it ran when that is not its usual one."""
    if r.mode == "autocast_bf16" and r.conv_path == "dense":
        return "autocast bf16 (model as it is)"
    return MODE_LABEL.get(r.mode, r.mode)


# ---- events -----------------------------------------------------------------------------------------
@dataclass
class ModelOptions:
    modes: tuple[str, ...] = DEFAULT_MODES
    mode_budget_ms: float = DEFAULT_MODE_BUDGET_MS
    min_samples: int = 5
    predict: bool = True
    precision: float = PLANNER_PRECISION  # the per-layer loops' early stop (RunOptions.precision)
    earliest_share: float = PLANNER_EARLIEST_SHARE  # their first early-stop check (RunOptions.earliest_share)

    def validate(self) -> ModelOptions:
        if not self.modes:
            raise InputError(f"no mode selected; choose from {', '.join(MODES)}.", "modes")
        for m in self.modes:
            if m not in MODES:
                raise InputError(f"unknown mode {m!r}; choose from {', '.join(MODES)}.", "modes")
        if "nchw" not in self.modes:
            self.modes = ("nchw",) + tuple(self.modes)  # every ratio is against the model as it is
        if not (1 <= self.mode_budget_ms <= 600_000):
            raise InputError(f"--mode-budget-ms must be from 1 to 600000, got {self.mode_budget_ms!r}.", "mode_budget_ms")
        if not (isinstance(self.precision, (int, float)) and 0 < self.precision < 1):
            raise InputError(f"the per-layer precision must be a fraction above 0 and below 1, got {self.precision!r}.",
                             "precision")
        if not (isinstance(self.earliest_share, (int, float)) and 0 < self.earliest_share <= 1):
            raise InputError(f"the per-layer early-stop share must be above 0 and at most 1, got "
                             f"{self.earliest_share!r}.", "earliest_share")
        return self


@dataclass
class ModelStarted:
    inventory: Inventory


@dataclass
class ModeStarted:
    mode: str
    index: int
    total: int


@dataclass
class ModeResult:
    """One end-to-end mode: measured per forward, predicted from the per-layer table."""

    mode: str
    status: str = "ok"  # ok | unsupported | error | skipped | wrong output (surgery.wrong_output: not timed)
    error: str = ""
    samples: int = 0
    measured_ms: float | None = None
    iqr_ms: float | None = None
    min_ms: float | None = None
    mean_ms: float | None = None
    p25_ms: float | None = None
    p75_ms: float | None = None
    stop_reason: str = ""
    max_abs_err: float | None = None
    rel_err: float | None = None
    conv_ms: float | None = None  # the convs' time the prediction used: in model order (model_sequence), else conv_alone_ms
    conv_alone_ms: float | None = None  # sum over convs of (count x that layer's per-layer table time, each alone)
    conv_seq: object = None  # model_sequence.SequenceTiming of this mode's convs in model order, or None
    conv_seq_quality: str = ""  # the interference verdict of the in-order conv loop
    conv_seq_note: str = ""  # why the convs were not timed in model order (the prediction then uses the table)
    graph_convs: int | None = None  # jit_mkldnn: conv nodes of the frozen graph its prediction ran (model_jit)
    graph_cut_error: str = ""  # jit_mkldnn: why its graph could not be cut into parts
    graph_fed: int | None = None  # jit_mkldnn: the cut nodes' outputs its remainder is fed (model_jit)
    graph_buffers: int | None = None  # jit_mkldnn: the buffers they share, one per shape, dtype and layout
    conversion_ms: float | None = None  # conversions the mode forces (input, output, at non-conv ops)
    conversion_source: str = ""  # how conversion_ms was timed, when not the mode's default way
    remainder_ms: float | None = None  # the non-conv rest, measured with the convs stubbed out
    remainder_quality: str = ""
    # the convs' time inside this mode's own forward (model_inplace): beside conv_ms it shows whether the
    # per-layer table or the remainder is what a prediction misses
    convs_in_model_ms: float | None = None
    convs_in_model_note: str = ""
    # how far a reference layer's speed moved between the per-layer table and this mode (model_drift)
    host_drift_pct: float | None = None
    host_drift_ref: str = ""  # which layer: "reference layer NAME (dense)"
    host_drift_note: str = ""
    compile_ms: float | None = None  # compiled: torch.compile's first call, never inside measured_ms
    f32_max_abs_err: float | None = None  # a bf16 mode or a bf16 plan: its output against the f32 model as it is
    f32_rel_err: float | None = None
    mode_note: str = ""  # what the mode is here: its compile time, its f32 error, no fast bf16 on this CPU
    conv_path: str = ""  # the path its convs ran on when not MODE_PATH's (autocast_bf16 on 1-D convs: dense)
    predicted_ms: float | None = None
    predict_note: str = ""  # why there is no prediction, or what it leaves out
    finding: str = ""  # a finding about the model measured beside the mode (activations: subnormal inputs)
    speedup: float | None = None  # nchw measured / this measured
    predicted_speedup: float | None = None  # nchw predicted / this predicted
    convs_faster: int | None = None  # convs (counted) whose path beats dense
    convs_total: int | None = None
    convs_not_compared: str = ""  # the inventory's convs with no per-layer row, by kind ("1 ConvTranspose1d")
    slower_layers: list = field(default_factory=list)  # names of layers slower than dense on this path
    # the speedup's spread from the two measured loops' quartiles (nchw p25 / this p75 .. nchw p75 / this p25):
    # when it covers 1.0 the measured direction is not settled (direction_doubt)
    speedup_low: float | None = None
    speedup_high: float | None = None
    uncertain: bool = False  # a figure behind the speedup or the prediction is noisy
    uncertain_reason: str = ""
    # interference columns of the measured loop (runner.fill_quality)
    quality: str = ""
    quality_reason: str = ""
    samples_used: int | None = None
    attempts: int | None = None
    runq_wait_pct: float | None = None
    faults_per_call: float | None = None
    ctx_switches_per_call: float | None = None
    cpu_pct: float | None = None
    steal_pct: float | None = None
    other_cpu_pct: float | None = None
    slowdown_pct: float | None = None
    loadavg: float | None = None

    @property
    def noisy(self) -> bool:
        return self.quality == "noisy"

    @property
    def predicted_noisy(self) -> bool:
        """A loop behind the prediction (the convs in order, the remainder or the conversions) is noisy."""
        return "noisy" in (self.conv_seq_quality, self.remainder_quality)

    @property
    def agreement_noise(self) -> list[str]:
        """Which noisy loops predicted/measured stands on (none: a ratio to read as a finding)."""
        return [what for what, bad in (("the measured loop is noisy", self.noisy),
                                       ("the loop of the convs in model order is noisy", self.conv_seq_quality == "noisy"),
                                       ("the remainder or conversion loop is noisy", self.remainder_quality == "noisy"))
                if bad]

    @property
    def agreement_noisy(self) -> bool:
        """Predicted/measured stands on a noisy loop: a ratio to read as uncertain, not as a miss."""
        return bool(self.agreement_noise)


@dataclass
class ModeFinished:
    result: ModeResult


@dataclass
class ModelFinished:
    report: "ModelReport"
    cancelled: bool = False


@dataclass
class LayerSummary:
    """A distinct layer and what the per-layer table says about it."""

    layer: Layer
    results: dict  # path -> Result (ok or not)
    best_path: str = ""
    best_ms: float | None = None
    margin: float | None = None  # second best / best (how much the winner wins by)
    noisy: bool = False
    chained: object = None  # Result of the mkldnn_chained variant (jit_mkldnn's per-layer time), or None
    in_sequence: dict = field(default_factory=dict)  # path -> ms per call with the model's other convs in between


@dataclass
class ModelReport:
    inventory: Inventory
    layers: list[LayerSummary]
    modes: list[ModeResult]
    threads: int = 1
    started_at: str = ""
    planned: tuple = ()  # the modes the plan was asked to run (() in reports saved before it was kept)

    @property
    def not_run(self) -> list[str]:
        """Planned modes with no result (the plan was stopped before them): no verdict may speak for them."""
        return [m for m in self.planned if self.mode(m) is None]

    def mode(self, name: str) -> ModeResult | None:
        return next((m for m in self.modes if m.mode == name), None)

    @property
    def findings(self) -> list[str]:
        """The measured findings the answer area shows under the answer (the subnormal convs)."""
        return [m.finding for m in self.modes if m.finding]

    def answer(self) -> str:
        """The one line the user came for: the best mode that runs, measured and predicted."""
        return answer_line(self)


def summarize_layer(layer: Layer, results: dict) -> LayerSummary:
    ok = sorted((r.median_ms, p) for p, r in results.items() if r.status == "ok" and r.median_ms)
    s = LayerSummary(layer, results)
    if ok:
        s.best_ms, s.best_path = ok[0]
        if len(ok) > 1:
            s.margin = ok[1][0] / ok[0][0]
    s.noisy = any(getattr(r, "quality", "") == "noisy" for r in results.values())
    return s


def speed_words(speedup: float) -> str:
    """A speedup (baseline time / this time) in words: 1.25 -> '1.25x faster', 0.8 -> '1.25x slower'."""
    return f"{speedup:.2f}x faster" if speedup >= 1 else f"{1 / speedup:.2f}x slower"


def direction_doubt(r: ModeResult) -> str:
    """Why a mode's figures do not say whether it is faster or slower than the model as it is ('' when they
    do): the measured and predicted speedups point opposite ways, or the measured spread covers 1.0. Such a
    line states no direction and such a mode is never the answer (issue 36: "~1.12x faster (predicted 1.11x
    slower)" read as a verdict its own figures contradict)."""
    s, p = r.speedup, r.predicted_speedup
    if r.mode == "nchw" or r.status != "ok" or not s:
        return ""
    if p and (s - 1) * (p - 1) < 0:
        return "measured and predicted disagree in direction"
    if r.speedup_low is not None and r.speedup_high is not None and r.speedup_low <= 1 <= r.speedup_high:
        return (f"the measured loops' quartiles give {r.speedup_low:.2f}x to {r.speedup_high:.2f}x, "
                "either side of 1")
    return ""


def mode_line(r: ModeResult) -> str:
    """One mode in one line: '~' and 'uncertain' when a figure behind it is noisy."""
    label = mode_label(r)
    if r.status == "wrong output":
        return f"{label}: wrong output: {r.error}"
    if r.status != "ok":
        return f"{label}: cannot run: {r.error}"
    if r.mode == "nchw":
        pred = f" (predicted {r.predicted_ms:.4g} ms)" if r.predicted_ms else ""
        line = f"{label}: {'~' if r.noisy or r.uncertain else ''}{r.measured_ms:.4g} ms per forward{pred}"
        if r.uncertain:
            line += f" (uncertain: {r.uncertain_reason})"
        elif r.noisy:
            line += f" (noisy: {r.quality_reason})"
        return line + (f"; {r.mode_note}" if r.mode_note else "")
    t = "~" if r.uncertain else ""
    s = r.speedup
    how = speed_words(s)
    doubt = direction_doubt(r)
    reasons = r.uncertain_reason if doubt in r.uncertain_reason else "; ".join(x for x in (doubt, r.uncertain_reason) if x)
    if doubt:  # no direction: both figures, each in words, and why neither is the verdict
        pred = f"predicted {speed_words(r.predicted_speedup)}" if r.predicted_speedup else "no prediction"
        line = f"{label}: no clear difference end to end (measured {how}, {pred}: uncertain, {reasons})"
    else:
        # in the same words as the measured figure: "1.23x slower (predicted 0.79x)" read as two verdicts
        pred = f" (predicted {speed_words(r.predicted_speedup)})" if r.predicted_speedup else " (no prediction)"
        line = f"{label}: {t}{how} end to end{pred}"
    if r.convs_total and r.convs_faster is not None:  # None: its convs run the dense path (no comparison)
        line += f"; {r.convs_faster} of {r.convs_total} convs faster"
        if r.convs_not_compared:  # so the count adds up to the inventory's
            line += f" (the {r.convs_not_compared} not timed per layer)"
        if r.slower_layers:
            names = ", ".join(r.slower_layers[:2]) + (f" and {len(r.slower_layers) - 2} more" if len(r.slower_layers) > 2 else "")
            line += f", {names} slower" if len(r.slower_layers) <= 2 else f", slower: {names}"
    if r.uncertain and not doubt:
        line += f" (uncertain: {r.uncertain_reason})"
    if r.error:
        line += f"; {r.error}"
    if r.mode_note:
        line += f"; {r.mode_note}"
    return line


def answer_line(report: ModelReport) -> str:
    """The best mode that ran; a verdict over every mode only when every planned mode ran (after Stop the
    line names the modes that did not run and judges only those that did)."""
    missing = report.not_run
    # int8 changes the numbers: it is a candidate only with its error against f32 stated
    runs = [r for r in report.modes if r.mode != "nchw" and r.status == "ok" and r.speedup
            and (r.mode != "int8" or r.rel_err is not None)]
    clear = [r for r in runs if not direction_doubt(r)]  # a mode of no clear direction is never the answer
    if missing:
        names = ", ".join(MODE_LABEL.get(m, m) for m in missing)
        if not runs:
            return f"no verdict: {names} did not run (stopped)."
        gap = f"{names} did not run (stopped): no verdict on {'it' if len(missing) == 1 else 'them'}"
        best = max(clear or runs, key=lambda r: r.speedup)
        return f"{gap}; the best of the modes that ran is {mode_line(best)}"
    if not runs:
        return "no mode other than the model as it is could run: keep it as it is."
    best = max(clear or runs, key=lambda r: r.speedup)
    if not clear or best.speedup < 1:
        every = "every mode is slower" if len(clear) == len(runs) else "no mode is clearly faster"
        # the closest over every mode that ran: a clear mode 28x slower is not closer than an uncertain one
        # measured faster (its own line then says "no clear difference" with both figures)
        closest = max(runs, key=lambda r: r.speedup)
        return f"keep the model as it is: {every}; the closest is {mode_line(closest)}"
    return mode_line(best)
