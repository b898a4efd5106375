"""The parameter panel: presets, the benchdnn descriptor (editable, synced both ways), a field for every
spec value, dtype, bias, threads, budget and a check box per path. Validates as you type through the
core's own checks (ConvSpec.validate, check_memory, validate_paths): the offending field is outlined, one
sentence says why, and `validity_changed(False)` lets the window disable Run.
"""

from __future__ import annotations

import json
import os
from importlib import resources

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError, SpecError
from explorer.core.paths.base import ALL_PATHS, PATH_HELP, PATHS
from explorer.core.problem.int8_config import INT8_DTYPES
from explorer.core.problem.spec import DTYPES, FIELD_HELP, ConvSpec, descriptor_hints, parse_descriptor
from explorer.gui.common.colors import path_color

# (row label, h-field, w-field or None, row tooltip)
GRID = (
    ("batch / groups", "mb", "g"),
    ("channels in / out", "ic", "oc"),
    ("input h / w", "ih", "iw"),
    ("kernel h / w", "kh", "kw"),
    ("stride h / w", "sh", "sw"),
    ("padding h / w", "ph", "pw"),
    ("dilation h / w", "dh", "dw"),
)
INT_FIELDS = tuple(f for row in GRID for f in row[1:])
# 3-D: the depth value of each spatial row (shown in a third column, enabled for 3-D problems)
DEPTH_OF = {"ih": "id", "kh": "kd", "sh": "sd", "ph": "pd", "dh": "dd"}
NEUTRAL = {"i": 1, "k": 1, "s": 1, "p": 0, "d": 0}  # benchdnn's values for an absent dim
RIGHT_PADS = ("ph_r", "pw_r", "pd_r")
NDIMS_TEXT = {3: "1-D (w)", 4: "2-D (h, w)", 5: "3-D (d, h, w)"}
DTYPE_HELP = {
    "f32": "32-bit float: every path supports it.",
    "bf16": "bfloat16: runs on AMX or AVX-512 BF16 where oneDNN has it; some paths refuse it.",
    "f16": "float16: oneDNN support depends on the CPU; some paths refuse it.",
}
INVALID_STYLE = "border: 2px solid #d93025; border-radius: 3px;"


def load_presets() -> list[dict]:
    """resources/presets.json (package explorer.resources): network, layer, desc, note, optional default."""
    try:
        text = resources.files("explorer.resources").joinpath("presets.json").read_text(encoding="utf-8")
        data = json.loads(text)
        return [p for p in data if isinstance(p, dict) and isinstance(p.get("desc"), str)]
    except (OSError, ValueError, ModuleNotFoundError):
        return []


def default_preset(presets: list[dict]) -> dict | None:
    for p in presets:
        if p.get("default"):
            return p
    return presets[0] if presets else None


def parse_pasted(text: str, dtype: str | None, bias: bool | None, direction: str | None = None) -> ConvSpec:
    """parse_descriptor, keeping the form's dtype/bias/direction unless the pasted line says otherwise
    (benchdnn --dt/--cfg/--dir, or a oneDNN verbose line's src data type, bia argument and prop kind)."""
    hints = descriptor_hints(text)
    return parse_descriptor(text, dtype=hints.get("dtype", dtype), bias=hints.get("bias", bias),
                            direction=hints.get("direction", direction))


def desc_text(spec: ConvSpec) -> str:
    """The descriptor field's canonical text: the problem, after the benchdnn options no field shows (the
    post-ops and the io tag), so a pasted line's words stay in sight and in the spec."""
    words = [f"--attr-post-ops={spec.post_ops}"] if spec.post_ops else []
    if spec.io_tag:
        words += [f"--stag={spec.io_tag}", f"--dtag={spec.io_tag}"]
    return " ".join(words + [spec.descriptor()])


# The direction box: "FWD" is the forward whose bias box says FWD_B or FWD_D (benchdnn's two names for it).
DIRECTION_ITEMS = ("FWD", "FWD_I", "BWD_D", "BWD_W", "BWD_WB")
DIRECTION_HELP = {"FWD": "forward (FWD_B with the bias box on, FWD_D off)", "FWD_I": "forward inference",
                  "BWD_D": "backward by data: the input's gradient alone (aten.convolution_backward)",
                  "BWD_W": "backward by weights: the weights' gradient alone",
                  "BWD_WB": "backward by weights and bias: both gradients (needs the bias)"}


def _swatch(color: str, size: int = 12) -> QIcon:
    pm = QPixmap(size, size)
    pm.fill(QColor(color))
    return QIcon(pm)


class ParamPanel(QWidget):
    spec_changed = Signal(object)  # ConvSpec or None
    validity_changed = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("paramPanel")
        self._spec: ConvSpec | None = None
        self._error: tuple[str, str] | None = None
        self._valid = False
        self._syncing = False
        self._edited: str | None = None  # the shape field the user edited last (the memory refusal outlines it)
        self.presets = load_presets()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        outer.setSpacing(6)

        # ---- problem --------------------------------------------------------------------------------
        box = QGroupBox("Convolution")
        form = QVBoxLayout(box)
        form.setSpacing(4)
        self.preset_combo = QComboBox()
        self.preset_combo.setToolTip("A real layer from a known network; picking one fills every field below.")
        self.preset_combo.addItem("(custom)")
        for p in self.presets:
            self.preset_combo.addItem(f"{p.get('network', '?')} — {p.get('layer', '?')}", p)
            self.preset_combo.setItemData(self.preset_combo.count() - 1, p.get("note", p["desc"]), Qt.ToolTipRole)
        self.preset_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.preset_combo.setMinimumContentsLength(18)
        self.preset_combo.activated.connect(self._on_preset)
        form.addWidget(QLabel("Preset"))
        form.addWidget(self.preset_combo)
        self.desc_edit = QLineEdit()
        self.desc_edit.setObjectName("desc")
        self.desc_edit.setPlaceholderText("mb2ic16ih14oc16oh14kh3ph1, or paste a benchdnn / oneDNN verbose line")
        self.desc_edit.setToolTip(
            "The benchdnn descriptor, kept in sync with the fields; paste a batch-file or oneDNN verbose line here."
        )
        self.desc_edit.textEdited.connect(self._on_desc_edited)
        self.desc_edit.editingFinished.connect(self._on_desc_finished)
        form.addWidget(QLabel("benchdnn descriptor"))
        form.addWidget(self.desc_edit)

        grid = QGridLayout()
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(3)
        self.fields: dict[str, QLineEdit] = {}
        self.ndims_combo = QComboBox()
        self.ndims_combo.setObjectName("ndims")
        for nd, text in NDIMS_TEXT.items():
            self.ndims_combo.addItem(text, nd)
        self.ndims_combo.setCurrentIndex(1)
        self.ndims_combo.setToolTip("1-D (conv1d), 2-D (conv2d) or 3-D (conv3d): which spatial fields apply.")
        self.ndims_combo.currentIndexChanged.connect(self._on_ndims)
        grid.addWidget(QLabel("spatial dims"), 0, 0)
        grid.addWidget(self.ndims_combo, 0, 1, 1, 3)
        self._row_labels: dict[str, QLabel] = {}
        for r, (label, fh, fw) in enumerate(GRID, start=1):
            lab = QLabel(label)
            self._row_labels[fh] = lab
            grid.addWidget(lab, r, 0)
            for c, key in ((1, fh), (2, fw)):
                e = QLineEdit()
                e.setObjectName(key)
                e.setToolTip(f"{key}: {FIELD_HELP[key]}.")
                e.setPlaceholderText(key)
                e.setMaximumWidth(72)
                e.setAlignment(Qt.AlignRight)
                e.textEdited.connect(self._on_field_edited)
                self.fields[key] = e
                grid.addWidget(e, r, c)
            if fh in DEPTH_OF:
                key = DEPTH_OF[fh]
                e = self._int_edit(key, f"{key}: {FIELD_HELP[key]} (3-D only).")
                self.fields[key] = e
                grid.addWidget(e, r, 3)
        r = len(GRID) + 1
        grid.addWidget(QLabel("right pad h / w / d"), r, 0)
        for c, key, x in ((1, "ph_r", "h"), (2, "pw_r", "w"), (3, "pd_r", "d")):
            e = self._int_edit(key, f"right (bottom, back) pad along {x}; empty: the same as the left pad. benchdnn "
                                    f"writes it as an output size: oh = (ih + ph + right - span) / sh + 1.")
            e.setPlaceholderText("= left")
            self.fields[key] = e
            grid.addWidget(e, r, c)
        r += 1
        self.out_caption = QLabel("output h × w")
        grid.addWidget(self.out_caption, r, 0)
        self.out_label = QLabel("-")
        self.out_label.setToolTip("Output size computed from input, kernel, stride, padding and dilation.")
        grid.addWidget(self.out_label, r, 1, 1, 3)
        r += 1
        grid.addWidget(QLabel("dtype"), r, 0)
        self.dtype_combo = QComboBox()
        self.dtype_combo.setObjectName("dtype")
        for i, d in enumerate(DTYPES + INT8_DTYPES):  # int8: src/wei/dst types, run on the int8 paths
            self.dtype_combo.addItem(d)
            self.dtype_combo.setItemData(i, DTYPE_HELP.get(d, d), Qt.ToolTipRole)
        self.dtype_combo.setToolTip("Data type of input, weight and output for every path.")
        self.dtype_combo.currentTextChanged.connect(self._on_field_edited)
        grid.addWidget(self.dtype_combo, r, 1)
        self.bias_check = QCheckBox("bias")
        self.bias_check.setObjectName("bias")
        self.bias_check.setToolTip("Add a bias to the convolution (benchdnn FWD_B); off is FWD_D.")
        self.bias_check.setChecked(True)  # benchdnn's default direction, FWD_B
        self.bias_check.toggled.connect(self._on_field_edited)
        grid.addWidget(self.bias_check, r, 2)
        self.direction_combo = QComboBox()  # benchdnn's --dir: a backward one times only the gradients
        self.direction_combo.setObjectName("direction")
        for i, d in enumerate(DIRECTION_ITEMS):
            self.direction_combo.addItem(d)
            self.direction_combo.setItemData(i, DIRECTION_HELP[d], Qt.ToolTipRole)
        self.direction_combo.setToolTip("benchdnn's --dir: forward, or a backward direction timed alone.")
        self.direction_combo.currentTextChanged.connect(self._on_field_edited)
        grid.addWidget(self.direction_combo, r, 3)
        r += 1
        grid.addWidget(QLabel("name"), r, 0)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("name")
        self.name_edit.setToolTip("A label for the layer (benchdnn's n\"...\"); it does not change the problem.")
        self.name_edit.textEdited.connect(self._on_field_edited)
        grid.addWidget(self.name_edit, r, 1, 1, 2)
        form.addLayout(grid)
        self._apply_ndims(4)
        self.ops_label = QLabel("")
        self.ops_label.setToolTip("benchdnn's op count, as benchdnn prints it (GFLOP/s use it); where its shortcut "
                                  "counts padding taps too, the exact count of taps inside the input is shown beside.")
        self.ops_label.setWordWrap(True)  # with the memory estimate it is longer than the panel is wide
        form.addWidget(self.ops_label)
        outer.addWidget(box)

        # ---- run options -----------------------------------------------------------------------------
        box = QGroupBox("Run")
        f2 = QFormLayout(box)
        f2.setVerticalSpacing(3)
        self.threads_spin = QSpinBox()
        self.threads_spin.setObjectName("threads")
        self.threads_spin.setRange(0, os.cpu_count() or 1)
        self.threads_spin.setSpecialValueText("auto (torch default)")
        self.threads_spin.setToolTip("torch threads for the run; auto keeps torch's own setting.")
        self.threads_spin.valueChanged.connect(self._on_field_edited)
        f2.addRow("threads", self.threads_spin)
        self.budget_spin = QSpinBox()
        self.budget_spin.setObjectName("budget_ms")
        self.budget_spin.setRange(1, 600_000)
        self.budget_spin.setSingleStep(100)
        self.budget_spin.setSuffix(" ms")
        self.budget_spin.setValue(500)
        self.budget_spin.setToolTip("Time budget per path; timing stops earlier once the median is known to 0.5%.")
        self.budget_spin.valueChanged.connect(self._on_field_edited)
        f2.addRow("budget / path", self.budget_spin)
        from explorer.core.measure.allocator import ALLOCATORS, DEFAULT_ALLOCATOR, available

        self.allocator_combo = QComboBox()
        self.allocator_combo.setObjectName("allocator")
        have = available()
        for a in ALLOCATORS:
            self.allocator_combo.addItem(a if a in have else f"{a} (not installed)", a)
            if a not in have:  # shown, so the user knows it exists, but not selectable
                self.allocator_combo.model().item(self.allocator_combo.count() - 1).setEnabled(False)
        self.allocator_combo.setCurrentIndex(ALLOCATORS.index(DEFAULT_ALLOCATOR))
        self.allocator_combo.setToolTip(
            "The measuring process's memory allocator. tuned: glibc that never maps a buffer per call nor hands "
            "memory back (no page faults once warm, whatever ran before: reproducible); default: glibc's own settings, no variables (a new process per path, timed first); its page faults per "
            "call move with the heap's history, so two runs of one plain script can differ 2x: not reproducible; "
            "jemalloc / tcmalloc: preloaded when installed.")
        self.allocator_combo.currentIndexChanged.connect(self._on_field_edited)
        f2.addRow("allocator", self.allocator_combo)
        self._add_isa_combo(f2)
        self.trace_check = QCheckBox("record oneDNN trace and layouts")
        self.trace_check.setChecked(True)
        self.trace_check.setToolTip("One extra traced call per path (outside the timing) for the Trace and Layouts tabs.")
        f2.addRow(self.trace_check)
        outer.addWidget(box)

        # ---- paths ----------------------------------------------------------------------------------
        self.paths_box = QGroupBox("Paths")
        self.paths_box.setObjectName("paths")
        pl = QGridLayout(self.paths_box)  # one column: the panel stays narrow enough for a 1024 px window
        pl.setVerticalSpacing(2)
        self.path_checks: dict[str, QCheckBox] = {}
        for i, p in enumerate(ALL_PATHS):  # the routes (jit_frozen, compiled, ...) start unchecked: compiling is slow
            cb = QCheckBox(p)
            cb.setObjectName(f"path_{p}")
            cb.setIcon(_swatch(path_color(p)))
            cb.setChecked(p in PATHS)
            cb.setToolTip(PATH_HELP[p])
            cb.toggled.connect(self._on_field_edited)
            self.path_checks[p] = cb
            cb.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)  # its own width: clicks land on it
            pl.addWidget(cb, i, 0, Qt.AlignLeft)
        outer.addWidget(self.paths_box)

        # ---- message + buttons ------------------------------------------------------------------------
        self.message = QLabel("")
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        self.message.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        from explorer.gui.common.colors import follow_theme, theme

        # the theme's error red: a fixed #d93025 read at 2.9:1 on the dark panel
        follow_theme(self.message, lambda t: self.message.setStyleSheet(f"color: {theme(t)['error']}; font-weight: 600;"))
        # The message and the Run/Stop buttons: a footer the main window pins under the scrolled fields, so
        # Run never scrolls out of view in a short window.
        self.footer = QWidget()
        foot = QVBoxLayout(self.footer)
        foot.setContentsMargins(0, 0, 0, 0)
        foot.addWidget(self.message)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("run")
        self.run_button.setToolTip("Time every selected path (Ctrl+R).")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stop")
        self.stop_button.setToolTip("Stop after the current call; finished paths keep their rows (Esc).")
        self.stop_button.setEnabled(False)
        buttons.addWidget(self.run_button, 2)
        buttons.addWidget(self.stop_button, 1)
        foot.addLayout(buttons)
        outer.addWidget(self.footer)
        self._outer = outer
        outer.addStretch(1)

    def _int_edit(self, key: str, tip: str) -> QLineEdit:
        e = QLineEdit()
        e.setObjectName(key)
        e.setToolTip(tip)
        e.setPlaceholderText(key)
        e.setMaximumWidth(72)
        e.setAlignment(Qt.AlignRight)
        e.textEdited.connect(self._on_field_edited)
        return e

    def ndims(self) -> int:
        return int(self.ndims_combo.currentData() or 4)

    def _apply_ndims(self, nd: int) -> None:
        """Enable the fields of the spatial dims this problem has (the others hold benchdnn's neutral values)."""
        active = {3: "w", 4: "hw", 5: "dhw"}[nd]
        cols = {3: "w", 4: "h / w", 5: "h / w / d"}[nd]  # the grid's columns are h, w, d
        for label, fh, _ in GRID:
            if fh in DEPTH_OF:
                self._row_labels[fh].setText(label.replace("h / w", cols))
        self.out_caption.setText("output " + " × ".join(active))
        for key, e in self.fields.items():
            if key in ("mb", "g", "ic", "oc"):
                continue
            dim = key[1] if key.endswith("_r") else key[-1]
            e.setEnabled(dim in active)

    def _on_ndims(self, *_) -> None:
        if self._syncing:
            return
        self._apply_ndims(self.ndims())
        self._validate(update_desc=True)

    def detach_footer(self) -> QWidget:
        """Take the message and Run/Stop footer out of the panel (the caller lays it out elsewhere)."""
        self._outer.removeWidget(self.footer)
        return self.footer

    # ---- public API -----------------------------------------------------------------------------------
    @property
    def spec(self) -> ConvSpec | None:
        return self._spec if self._valid else None

    @property
    def error(self) -> tuple[str, str] | None:
        """(one-sentence message, field) while the form is invalid."""
        return self._error

    @property
    def is_valid(self) -> bool:
        return self._valid

    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in ALL_PATHS if self.path_checks[p].isChecked())

    def options(self) -> dict:
        return {
            "paths": list(self.paths()),
            "threads": self.threads_spin.value() or None,
            "budget_ms": float(self.budget_spin.value()),
            "trace": self.trace_check.isChecked(),
            "allocator": self.allocator_combo.currentData(),
            "isa": self.isa_combo.currentData(),
        }

    def run_options(self):
        from explorer.core.jobs.options import RunOptions

        o = self.options()
        return RunOptions(paths=tuple(o["paths"]), threads=o["threads"], budget_ms=o["budget_ms"], trace=o["trace"],
                          allocator=o["allocator"], isa=o["isa"])

    def set_spec(self, spec: ConvSpec) -> None:
        self._fill(spec, set_desc=True)
        self._select_preset_for(spec)
        self._validate()

    def set_descriptor(self, text: str) -> None:
        """As if the user pasted `text` into the descriptor field."""
        self.desc_edit.setText(text)
        self._on_desc_edited(text)
        self._on_desc_finished()

    def _add_isa_combo(self, form) -> None:
        """The ISA what-if: the measuring process acts as a CPU with at most this ISA (names above this CPU's are
        listed but not selectable, so the user sees what exists)."""
        from explorer.core.measure.isa import ISAS, available

        self.isa_combo = QComboBox()
        self.isa_combo.setObjectName("isa")
        self.isa_combo.addItem("this CPU (no cap)", None)
        have = available()
        for n in ISAS:
            self.isa_combo.addItem(n if n in have else f"{n} (not on this CPU)", n)
            if n not in have:
                self.isa_combo.model().item(self.isa_combo.count() - 1).setEnabled(False)
        self.isa_combo.setToolTip(
            "Cap oneDNN (ONEDNN_MAX_CPU_ISA) and ATen (ATEN_CPU_CAPABILITY) in the measuring process: the kernels "
            "and layouts a smaller CPU would get (aBcd8b with avx2, aBcd16b with avx512_core), on this CPU's clock, "
            "caches and memory. Each row's isa is what oneDNN reports it ran with.")
        self.isa_combo.currentIndexChanged.connect(self._on_field_edited)
        form.addRow("ISA", self.isa_combo)

    def set_isa(self, name: str | None) -> bool:
        """Select `name` (None: no cap); False when this CPU lacks it (the combo keeps its choice)."""
        i = self.isa_combo.findData(name)
        if i < 0 or not self.isa_combo.model().item(i).isEnabled():
            return False
        self.isa_combo.setCurrentIndex(i)
        return True

    def set_options(self, paths=None, threads=None, budget_ms=None, trace=None, allocator=None,
                    isa=...) -> None:
        """Set the given fields (None or left out: keep it; isa=None is "no cap", so its default is ...)."""
        self._syncing = True
        try:
            if paths is not None:
                for p, cb in self.path_checks.items():
                    cb.setChecked(p in paths)
            if threads is not None:
                self.threads_spin.setValue(int(threads) if threads else 0)
            if budget_ms is not None:
                self.budget_spin.setValue(int(round(float(budget_ms))))
            if trace is not None:
                self.trace_check.setChecked(bool(trace))
            if allocator is not None:
                i = self.allocator_combo.findData(allocator)
                if i >= 0 and self.allocator_combo.model().item(i).isEnabled():
                    self.allocator_combo.setCurrentIndex(i)
            if isa is not ...:
                self.set_isa(isa)
        finally:
            self._syncing = False
        self._validate()

    def select_default_preset(self) -> None:
        p = default_preset(self.presets)
        if p:
            self.set_descriptor(p["desc"])

    def set_running(self, running: bool) -> None:
        self.stop_button.setEnabled(running)
        self.run_button.setEnabled(self._valid and not running)
        self._running = running

    # ---- syncing --------------------------------------------------------------------------------------
    def _fill(self, spec: ConvSpec, set_desc: bool) -> None:
        self._edited = None  # the whole spec came at once (descriptor, preset, set_spec): no one field edited
        self._syncing = True
        try:
            for key, e in self.fields.items():
                v = getattr(spec, key)
                e.setText("" if v is None else str(v))
            self.ndims_combo.setCurrentIndex(self.ndims_combo.findData(spec.ndims))
            self._apply_ndims(spec.ndims)
            self.dtype_combo.setCurrentText(spec.dtype)
            self._quant = (spec.scales, spec.zero_points)  # a pasted int8 line's scales, kept for _read_fields
            self._attrs = (spec.post_ops, spec.io_tag)  # a pasted line's post-ops and tags: no field shows them
            self.bias_check.setChecked(spec.bias)
            self.direction_combo.setCurrentText("FWD" if spec.direction in ("FWD_B", "FWD_D") else spec.direction)
            self.name_edit.setText(spec.name)
            if set_desc:
                self.desc_edit.setText(desc_text(spec))
        finally:
            self._syncing = False

    def _select_preset_for(self, spec: ConvSpec) -> None:
        for i in range(1, self.preset_combo.count()):
            p = self.preset_combo.itemData(i)
            try:
                ps = parse_descriptor(p["desc"], dtype=spec.dtype, bias=spec.bias)
            except ExplorerError:
                continue
            if ps.replace(name="") == spec.replace(name=""):
                self.preset_combo.setCurrentIndex(i)
                return
        self.preset_combo.setCurrentIndex(0)

    def _follow_preset(self, spec: ConvSpec) -> ConvSpec:
        """After a field edit: the preset of spec's shape, else (custom). A name the left preset filled in goes
        with it (a row named after a preset's layer must be that layer's shape); a name the user typed stays."""
        left = self.preset_combo.currentData()
        self._select_preset_for(spec)
        if self.preset_combo.currentIndex() != 0 or not isinstance(left, dict) or not spec.name:
            return spec
        try:
            preset_name = parse_descriptor(left["desc"]).name
        except ExplorerError:
            return spec
        if spec.name != preset_name:
            return spec
        self._syncing = True
        self.name_edit.setText("")
        self._syncing = False
        return spec.replace(name="")

    def _on_preset(self, index: int) -> None:
        p = self.preset_combo.itemData(index)
        if isinstance(p, dict):
            self.set_descriptor(p["desc"])
            self.preset_combo.setCurrentIndex(index)

    def _on_desc_edited(self, text: str) -> None:
        if self._syncing:
            return
        try:
            spec = parse_pasted(text, self.dtype_combo.currentText(), self.bias_check.isChecked(), self._direction())
        except SpecError as e:
            self._set_error(str(e), "desc" if e.field not in self.fields else e.field, desc_error=True)
            return
        self._fill(spec, set_desc=False)
        self._select_preset_for(spec)
        self._validate()

    def _on_desc_finished(self) -> None:
        if self._valid and self._spec is not None:
            self._syncing = True
            self.desc_edit.setText(desc_text(self._spec))  # canonical form once the user is done
            self._syncing = False

    def _on_field_edited(self, *_) -> None:
        if self._syncing:
            return
        sender = self.sender()
        self._edited = next((k for k, e in self.fields.items() if e is sender), None)
        self._validate(update_desc=True)

    # ---- validation -----------------------------------------------------------------------------------
    def _read_fields(self) -> ConvSpec:
        values = {}
        for key, e in self.fields.items():
            text = e.text().strip()
            if not e.isEnabled():  # a dim this problem does not have: benchdnn's neutral value
                values[key] = None if key.endswith("_r") else NEUTRAL.get(key[0], 1)
                continue
            if key.endswith("_r") and not text:
                values[key] = None
                continue
            try:
                values[key] = int(text)
            except ValueError:
                what = "empty" if not text else repr(text)
                help_ = FIELD_HELP.get(key, "right pad")
                raise SpecError(f"{key} ({help_}) must be a whole number, got {what}.", key) from None
        dtype = self.dtype_combo.currentText()
        scales, zero_points = getattr(self, "_quant", ("", "")) if dtype in INT8_DTYPES else ("", "")
        post_ops, io_tag = getattr(self, "_attrs", ("", ""))
        return ConvSpec(
            **values, ndims=self.ndims(), bias=self.bias_check.isChecked(), dtype=dtype,
            name=self.name_edit.text().strip().replace('"', ""), direction=self._direction(),
            scales=scales, zero_points=zero_points, post_ops=post_ops, io_tag=io_tag,
        ).normalized()

    def _direction(self) -> str:
        d = self.direction_combo.currentText()
        return "FWD_B" if d == "FWD" else d  # FWD_B becomes FWD_D when the bias box is off (ConvSpec's rule)

    def _validate(self, update_desc: bool = False) -> None:
        from explorer.core.jobs.options import validate_paths
        from explorer.core.problem.memory import check_memory, fmt_bytes

        try:
            spec = self._read_fields().validate()
        except ExplorerError as e:
            self._set_error(str(e), getattr(e, "field", None) or "desc", desc_error=False)
            return
        if update_desc:  # a well-formed spec: the preset and descriptor show it even when paths or memory refuse it
            spec = self._follow_preset(spec)
            self._syncing = True
            self.desc_edit.setText(desc_text(spec))
            self._syncing = False
        try:
            validate_paths(self.paths())
        except ExplorerError as e:
            self._set_error(str(e), getattr(e, "field", None) or "paths", desc_error=False)
            return
        try:
            need = check_memory(spec, self.paths())
        except ExplorerError as e:
            # the core names mb; the field the user just edited is the one that made the problem too big
            self._set_error(str(e), self._edited or getattr(e, "field", None) or "mb", desc_error=False)
            return
        self._spec = spec
        self.out_label.setText(" × ".join(str(spec.out(x)) for x in spec.dims)
                               + ("  (asymmetric pads: F.pad before the conv)" if spec.asymmetric else ""))
        ops = f"{spec.ops / 1e9:.3g} GFLOP per call (benchdnn count)"
        if spec.exact_ops != spec.ops:
            ops += f"; exact {spec.exact_ops / 1e9:.3g} (benchdnn's shortcut counts padding taps)"
        ops += f"; needs about {fmt_bytes(need)} of memory"  # the estimate the memory guard judges
        self.ops_label.setText(ops)
        self._set_error(None, None)
        self.spec_changed.emit(spec)

    def _set_error(self, message: str | None, field: str | None, desc_error: bool = False) -> None:
        widgets = dict(self.fields)
        widgets.update(desc=self.desc_edit, dtype=self.dtype_combo, paths=self.paths_box, name=self.name_edit,
                       direction=self.direction_combo)
        for w in widgets.values():
            w.setStyleSheet("")
        was = self._valid
        if message is None:
            self._error = None
            self._valid = True
            self.message.setText("")
            self.desc_edit.setToolTip(self.desc_edit.toolTip())
        else:
            self._error = (message, field or "desc")
            self._valid = False
            target = widgets.get(field) if not desc_error else self.desc_edit
            if field in ("oh", "ow", "od"):
                target = self.desc_edit
            target = target or self.desc_edit
            target.setStyleSheet(
                INVALID_STYLE if not isinstance(target, QGroupBox) else "QGroupBox { border: 2px solid #d93025; }"
            )
            self.message.setText(message)  # as the core wrote it: field names are case-sensitive
            self.out_label.setText("-")
            self.ops_label.setText("")
            self.spec_changed.emit(None)
        self.run_button.setEnabled(self._valid and not getattr(self, "_running", False))
        if was != self._valid:
            self.validity_changed.emit(self._valid)

    def field_widget(self, name: str) -> QWidget | None:
        widgets = dict(self.fields)
        widgets.update(desc=self.desc_edit, dtype=self.dtype_combo, paths=self.paths_box, name=self.name_edit,
                       direction=self.direction_combo)
        return widgets.get(name)
