"""An int8 configuration: src/wei/dst data types and the line's scales and zero points (benchdnn's syntax).

`--cfg=u8s8u8` / `--dt=u8:s8:u8` name the data types (the `dtype` column says `u8s8u8`); `--attr-scales=
src:common:0.25+wei:per_oc+dst:common:2` and `--attr-zero-points=src:common:1` (knobs_attr.md: ARG:POLICY[:VALUE
[:DATA_TYPE]], entries joined by `+`) are kept as given in the `scales` and `zero_points` columns. A value left
out (or a per_oc weight scale) is calibrated on the data by the int8 paths (explorer.core.paths.int8).
"""

from __future__ import annotations

from dataclasses import dataclass

SRC_DTS = ("u8", "s8")
DST_DTS = ("u8", "s8", "s32", "f32")
INT8_DTYPES = tuple(f"{s}s8{d}" for s in SRC_DTS for d in DST_DTS)
_ARGS = ("src", "wei", "dst")


def int8_dtype(value: str) -> str | None:
    """`u8s8u8` for --cfg=u8s8u8 or --dt=u8:s8:u8 (any case); None when the value is not an int8 config."""
    v = value.lower().replace(":", "")
    return v if v in INT8_DTYPES else None


def _entries(text: str, what: str) -> dict[str, tuple[str, float | None]]:
    """{arg: (policy, value or None)} of a --attr-scales / --attr-zero-points value; ValueError with why."""
    out: dict[str, tuple[str, float | None]] = {}
    for entry in (e for e in text.split("+") if e):
        parts = entry.split(":")
        arg, policy = parts[0].lower(), (parts[1].lower() if len(parts) > 1 else "")
        arg = "src" if arg == "src0" else arg  # benchdnn's name for a conv's one src
        if arg not in _ARGS:
            raise ValueError(f"{what} are honoured for src, wei and dst only, not {arg!r}")
        if what == "zero points" and arg == "wei":
            raise ValueError("PyTorch's int8 convs take symmetric weights: a wei zero point is not honoured")
        allowed = ("common", "per_oc") if arg == "wei" else ("common",)
        if policy not in allowed:
            raise ValueError(f"the {arg} policy must be {' or '.join(allowed)} (PyTorch's int8 convs), not {policy!r}")
        value = None
        if len(parts) > 2 and parts[2] != "":
            if policy == "per_oc":
                raise ValueError("a per_oc weight scale takes no value (it is one per output channel)")
            try:
                value = float(parts[2]) if what == "scales" else int(parts[2])
            except ValueError:
                raise ValueError(f"the {arg} {what[:-1]} {parts[2]!r} is not a number") from None
            if what == "scales" and not value > 0:
                raise ValueError(f"the {arg} scale must be above 0, not {parts[2]}")
        if len(parts) > 3 and parts[3].lower() not in ("", "f32"):
            raise ValueError(f"{what} are f32 in PyTorch's int8 convs, not {parts[3]}")
        if arg in out:
            raise ValueError(f"the {arg} {what} are given twice")
        out[arg] = (policy, value)
    return out


def attr_problem(text: str, what: str) -> str:
    """'' when --attr-scales (what='scales') or --attr-zero-points ('zero points') value `text` is honoured, else
    why not (a clause)."""
    try:
        _entries(text, what)
    except ValueError as exc:
        return str(exc)
    return ""


@dataclass(frozen=True)
class Int8Config:
    src: str
    dst: str
    scales: str = ""
    zero_points: str = ""

    def scale(self, arg: str) -> float | None:
        """The line's common scale of arg, None when it leaves it to calibration (absent or per_oc)."""
        return _entries(self.scales, "scales").get(arg, ("", None))[1]

    def zero_point(self, arg: str, default: int) -> int:
        v = _entries(self.zero_points, "zero points").get(arg, ("", None))[1]
        return default if v is None else int(v)


def int8_config(dtype: str, scales: str = "", zero_points: str = "") -> Int8Config | None:
    """The int8 config of a problem's dtype column (`u8s8u8`), None for a float problem."""
    if dtype not in INT8_DTYPES:
        return None
    return Int8Config(dtype[:2], dtype[4:], scales, zero_points)
