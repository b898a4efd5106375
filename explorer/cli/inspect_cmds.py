"""`info` (versions, ISA, peak), `layout` (format tags and how a path stores its tensors) and `trace`
(the oneDNN primitives each path runs)."""

from __future__ import annotations

import json
import sys

from explorer.cli.common import fmt as _fmt
from explorer.cli.common import paths_arg, plural, spec_from, strict_json


def add_parsers(sub) -> None:
    p = sub.add_parser("layout", help="a format tag's layout, or how a path stores its input, weight and output")
    p.add_argument("desc", nargs="?", default=None, help="benchdnn conv descriptor (omit with --tag)")
    p.add_argument("--tag", type=str, default=None, help="oneDNN format tag, e.g. aBcd16b")
    p.add_argument("--dims", type=str, default=None, help="logical dims for --tag, e.g. 2,17,5,4")
    p.add_argument("--offset", type=str, default=None, help="with --tag: logical index whose offset to print, e.g. 1,16,2,3")
    p.add_argument("--kind", choices=("data", "weight"), default=None,
                   help="with --tag: name aliases as data (default) or weight; with DESC: show only the input and "
                        "output (data) or only the weight")
    p.add_argument("--path", type=str, default="mkldnn", help="with DESC: the path to inspect (default mkldnn)")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("trace", help="the oneDNN primitives each path really runs (one traced call)")
    p.add_argument("desc", help="benchdnn conv descriptor")
    p.add_argument("--paths", type=str, default="all", help="comma-separated paths; 'all' = the six seed paths (default), 'routes' = the three routes")
    p.add_argument("--dtype", type=str, default=None, help="f32 (default), bf16 or f16")
    p.add_argument("--no-bias", action="store_true", help="convolution without bias")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("info", help="versions, CPU ISA, threads and the measured peak")
    p.add_argument("--remeasure", action="store_true", help="measure the peak again instead of using the cache")
    p.add_argument("--no-peak", action="store_true", help="do not measure the peak if it is not cached")
    p.add_argument("--json", action="store_true")


def cmd_info(args) -> int:
    from explorer.core.measure import machine

    if not args.no_peak and not args.json:
        print("measuring the peak (cached afterwards) ...", file=sys.stderr, flush=True)
    data = machine.info(measure_peak_now=not args.no_peak, remeasure=args.remeasure)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    labels = {
        "torch_version": "torch", "onednn_version": "oneDNN", "cpu": "CPU", "torch_isa": "ISA (torch)",
        "onednn_isa": "ISA (oneDNN)", "avx512": "AVX-512", "amx": "AMX", "bf16_supported": "bf16 in oneDNN",
        "fp16_supported": "f16 in oneDNN", "threads": "threads", "cores": "cores",
        "mkldnn_available": "MKLDNN available", "peak_fp32_gflops": "peak fp32 GFLOP/s (best large GEMM)",
        "peak_bf16_gflops": "peak bf16 GFLOP/s (best large GEMM)", "peak_source": "peak from",
        "bandwidth_gbs": "memory bandwidth GB/s (256 MiB copy)",
        "peak_measured_at": "peak measured at",
    }
    for k, label in labels.items():
        v = data.get(k)
        print(f"{label:38s} {_fmt(v, '{:.1f}') if isinstance(v, float) else ('-' if v is None else v)}")
    return 0



def _int_list(text: str, what: str) -> tuple[int, ...]:
    from explorer.core.errors import InputError

    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"{what} must be whole numbers separated by commas, like 2,17,5,4; got {text!r}.", what) from None
    return values


def cmd_layout(args) -> int:
    from explorer.core.errors import InputError

    if args.tag:
        if args.desc:
            raise InputError("give either a descriptor or --tag with --dims, not both.", "tag")
        return _layout_of_tag(args)
    if not args.desc:
        raise InputError("give a conv descriptor (layout mb2ic17ih5oc17kh3ph1) or --tag TAG --dims D1,D2,...", "desc")
    for opt in ("dims", "offset"):
        if getattr(args, opt):
            raise InputError(f"--{opt} goes with --tag, not with a descriptor.", opt)
    from explorer.core.jobs.options import validate_paths
    from explorer.core.layout.path_layouts import inspect_path

    args.no_bias = False
    spec = spec_from(args)
    path = validate_paths((args.path,))[0]
    from explorer.core.problem.memory import check_memory

    check_memory(spec, (path,))  # refused before allocating, as `run` does: one sentence, exit 2
    ins = inspect_path(spec, path)
    if args.kind:  # with a descriptor, --kind picks the tensors shown (it was silently ignored before)
        ins.tensors = {r: t for r, t in ins.tensors.items() if (r == "weight") == (args.kind == "weight")}
    if args.json:
        print(strict_json(ins.to_dict()))
        return 0
    from explorer.core.problem.memory import fmt_bytes

    print(f"{spec.descriptor()}  dtype={spec.dtype}  path={path}")
    for role, t in ins.tensors.items():
        d = t.to_dict()
        stored = f"{d['tag']} ({d['alias']})" if d["alias"] else (d["tag"] or d["unknown_reason"])
        print(f"  {role:7s} dims {'x'.join(map(str, t.shape)):14s} stored {stored}  from the {t.source}")
        if d["padded_dims"]:
            print(f"          padded {'x'.join(map(str, d['padded_dims']))}  strides {d['strides']}")
        print(f"          {fmt_bytes(t.stored_bytes)} stored vs {fmt_bytes(t.logical_bytes)} logical "
              f"({t.stored_bytes} vs {t.logical_bytes} bytes, overhead {t.overhead_pct:.1f}%)")
        if t.kernel_tag:
            alias = f" ({t.kernel.alias})" if t.kernel is not None and t.kernel.alias else ""
            note = "" if t.stored is not None and t.kernel_tag == t.stored.tag else "  <- reordered for the kernel"
            print(f"          kernel used {t.kernel_tag}{alias} (from the trace){note}")
    if not ins.trace:
        print("  no oneDNN primitive ran: this path uses PyTorch's own kernels")
    return 0


def _layout_of_tag(args) -> int:
    from explorer.core.errors import InputError
    from explorer.core.layout.tags import layout_from_tag
    from explorer.core.problem.spec import parse_dtype

    if not args.dims:
        raise InputError("--tag needs --dims, e.g. --dims 2,17,5,4.", "dims")
    dims = _int_list(args.dims, "dims")
    if any(d < 1 for d in dims):
        raise InputError(f"every dim must be at least 1, got {args.dims}.", "dims")
    dtype = parse_dtype(args.dtype) if args.dtype else "f32"
    lay = layout_from_tag(args.tag, dims, dtype, kind=args.kind or "data")
    data = lay.to_dict()
    if args.offset:
        index = _int_list(args.offset, "offset")
        if len(index) != len(dims) or any(not 0 <= i < d for i, d in zip(index, dims)):
            raise InputError(f"--offset {args.offset} is not an element of dims {args.dims}.", "offset")
        data["index"] = list(index)
        data["offset"] = lay.offset(index)
        data["byte_offset"] = data["offset"] * lay.itemsize
        data["formula"] = lay.offset_formula(index)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    for k in ("tag", "alias", "dims", "padded_dims", "strides", "inner_blks", "inner_idxs", "dtype", "nbytes",
              "logical_nbytes", "overhead_pct"):
        print(f"{k:15s} {data.get(k)}")
    if args.offset:
        print(f"{'offset':15s} {data['offset']} elements ({data['byte_offset']} bytes)")
        print(f"{'formula':15s} {data['formula']}")
    return 0


def cmd_trace(args) -> int:
    from explorer.core.layout.path_layouts import inspect_path
    from explorer.core.paths.base import Tensors, is_unsupported, one_line

    from explorer.core.problem.memory import check_memory

    spec = spec_from(args)
    paths = paths_arg(args.paths)
    check_memory(spec, paths)  # refused before allocating, as `run` does: one sentence, exit 2
    tensors = Tensors.make(spec)
    out: dict = {"desc": spec.descriptor(), "dtype": spec.dtype, "direction": spec.direction, "paths": {}, "summary": {}, "errors": {}}
    for path in paths:
        try:
            ins = inspect_path(spec, path, tensors)
        except Exception as exc:  # noqa: BLE001 - a path torch refuses is reported, the others still run
            out["errors"][path] = ("unsupported: " if is_unsupported(exc) else "error: ") + one_line(exc)
            continue
        out["paths"][path] = [p.to_dict() for p in ins.trace]
        out["summary"][path] = ins.summary.to_dict() if ins.summary is not None else {}
    if args.json:
        print(strict_json(out))
        return 0
    print(f"{spec.descriptor()}  dtype={spec.dtype}  direction={spec.direction}")
    for path in paths:
        print(f"\n{path}:")
        if path in out["errors"]:
            print(f"  {out['errors'][path]}")
            continue
        prims = out["paths"][path]
        if not prims:
            print("  no oneDNN primitive ran: PyTorch's own kernels")
            continue
        for i, p in enumerate(prims, 1):
            fmts = " ".join(f"{k}:{p[k]}" for k in ("src", "wei", "dst") if p.get(k))
            prop = f" ({p['prop']})" if str(p.get("prop") or "").startswith("backward") else ""  # bwd primitives said
            print(f"  {i}. {p['op']:12s} {p['impl']:28s} {fmts}  {p['time_ms']:.4f} ms{prop}")
        s = out["summary"][path]
        print(f"  conv {s.get('conv_time_ms', 0):.4f} ms, reorders {s.get('reorder_time_ms', 0):.4f} ms "
              f"({plural(s.get('reorder_count', 0), 'reorder')})")
    return 0




COMMANDS = {"info": cmd_info, "layout": cmd_layout, "trace": cmd_trace}
