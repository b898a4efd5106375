"""The text beside the layout panes: the Details table and the one-line brief above the panes.

Pure string building from a TensorLayout and the Layout shown (stored, or as the kernel used it), so the
wording can be read and tested apart from the widget.
"""

from __future__ import annotations

from explorer.core.layout.picture import dim_names, fmt_dims, human_bytes
from explorer.core.layout.tags import Layout

__all__ = ["facts_html", "brief_html"]

SOURCE_TEXT = {
    "descriptor": "descriptor (the MKLDNN tensor's oneDNN memory desc)",
    "strides": "strides (of the dense tensor)",
    "trace": "trace (the convolution's oneDNN verbose line)",
}


def facts_html(tl, lay: Layout | None, kernel_mode: bool, legend: str) -> str:
    """Every fact about one tensor's layout, as an HTML table (the Details panel), `legend` under it."""
    rows: list[tuple[str, str]] = []
    rows.append(("Tensor", f"{tl.role} \u00b7 {fmt_dims(tl.shape)} {tl.dtype}"))
    rows.append(("Showing", "as the convolution kernel used it" if kernel_mode else "as stored"))
    if lay is not None:
        alias = lay.alias
        rows.append(("Tag", f"<b>{lay.tag}</b>" + (f" = {alias}" if alias else "")))
        rows.append(("Dims", fmt_dims(lay.dims)))
        padded = fmt_dims(lay.padded_dims)
        if lay.padded_dims != lay.dims:
            padded = f"<b>{padded}</b>"
        rows.append(("Padded dims", padded))
        rows.append(("Strides", ", ".join(str(s) for s in lay.strides) + " (outer, elements)"))
        if lay.inner_blks:
            names = dim_names(lay)
            rows.append(("Inner blocks", " ".join(f"{b}{names[d]}" for b, d in zip(lay.inner_blks,
                                                                                 lay.inner_idxs))))
        rows.append(("Contiguous run", f"{lay.innermost_run} elements"))
    if kernel_mode and lay is not None:
        stored_b, logical_b = lay.nbytes, lay.logical_nbytes
        src = "trace"
    else:
        stored_b, logical_b = tl.stored_bytes, tl.logical_bytes
        src = tl.source
    over = 100.0 * (stored_b - logical_b) / logical_b if logical_b else 0.0
    rows.append(("Stored bytes", f"<b>{stored_b}</b>" + (f" ({human_bytes(stored_b)})" if stored_b >= 1024
                                                           else "")))
    rows.append(("Logical bytes", f"{logical_b}" + (f" ({human_bytes(logical_b)})" if logical_b >= 1024
                                                    else "")))
    ov = f"{over:+.1f} %"
    rows.append(("Overhead", f"<b>{ov}</b> padding" if over > 0 else ov))
    rows.append(("From", SOURCE_TEXT.get(src, src)))
    if lay is None:
        reason = tl.unknown_reason or "no layout was recorded for this tensor"
        if not reason.lower().startswith("unknown"):
            reason = f"unknown, because {reason}"
        rows.append(("Layout", f"<i>{reason}</i>"))
    # Stored vs kernel comparison.
    if tl.kernel is not None:
        if tl.stored is not None and tl.kernel.tag == tl.stored.tag:
            rows.append(("Kernel", f"used it as stored ({tl.kernel.tag}): no reorder needed"))
        elif kernel_mode:
            st = tl.stored.tag if tl.stored is not None else "unknown"
            rows.append(("Kernel", f"stored as {st}; oneDNN reordered it to {tl.kernel.tag} for the kernel"))
        else:
            rows.append(("Kernel", f"used {tl.kernel.tag}"
                         + (f" = {tl.kernel.alias}" if tl.kernel.alias else "")
                         + ": a reorder ran before or after the convolution"))
    else:
        rows.append(("Kernel", "no oneDNN convolution in the trace"))
    body = "".join(f"<tr><td style='padding-right:6px; white-space:nowrap'><b>{k}</b></td><td>{v}</td></tr>"
                   for k, v in rows)
    table = f"<table cellspacing='0' cellpadding='1'>{body}</table>"
    return table if lay is None else table + f"<p style='margin-top:6px'><small>{legend}</small></p>"



def brief_html(tl, lay: Layout | None, kernel_mode: bool) -> str:
    """The facts that matter most, in one wrapped line above the panes (the Details panel has them all)."""
    parts = []
    if lay is not None:
        parts.append(f"<b>{lay.tag}</b>" + (f" = {lay.alias}" if lay.alias else ""))
        parts.append(f"{fmt_dims(lay.dims)} {tl.dtype}")
        if lay.padded_dims != lay.dims:
            parts.append(f"padded to <b>{fmt_dims(lay.padded_dims)}</b>")
        parts.append(f"runs of {lay.innermost_run}")
        stored_b, logical_b = (lay.nbytes, lay.logical_nbytes) if kernel_mode else (tl.stored_bytes,
                                                                                    tl.logical_bytes)
    else:
        parts.append(f"{tl.role} \u00b7 {fmt_dims(tl.shape)} {tl.dtype} \u00b7 <i>layout unknown</i>")
        stored_b, logical_b = tl.stored_bytes, tl.logical_bytes
    over = 100.0 * (stored_b - logical_b) / logical_b if logical_b else 0.0
    parts.append(f"stored {human_bytes(stored_b)}" + (f" (<b>{over:+.1f} %</b> padding)" if over > 0 else ""))
    if tl.kernel is None:
        parts.append("no oneDNN kernel")
    elif tl.stored is not None and tl.kernel.tag == tl.stored.tag:
        parts.append("the kernel used it as stored")
    elif kernel_mode:
        parts.append(f"reordered from {tl.stored.tag if tl.stored is not None else 'unknown'} for the kernel")
    else:
        parts.append(f"the kernel used <b>{tl.kernel.tag}</b> (a reorder)")
    return " \u00b7 ".join(parts)
