"""Why a user's model module could not import, in one sentence naming the library that failed: the chain of
installed packages the import went through (timm -> torchvision), the failing one's version, and, for the
known case of a torchvision built for another torch (the package index's CUDA builds beside the CPU torch:
"operator torchvision::nms does not exist"), which torch it was built for and what to install instead."""

from __future__ import annotations

import os
import re
import sys
import traceback


def _top_package(filename: str) -> str | None:
    """The top-level package a source file belongs to, by the sys.path entry it sits under (None: not one)."""
    path = os.path.abspath(filename)
    best = None
    for entry in sys.path:
        root = os.path.abspath(entry or os.getcwd()) + os.sep
        if path.startswith(root) and (best is None or len(root) > len(best)):
            best = root
    if best is None:
        return None
    first = path[len(best):].split(os.sep)[0]
    name = first[:-3] if first.endswith(".py") else first
    return name if name.isidentifier() else None


def import_chain(exc: BaseException, own: str) -> list[str]:
    """The installed packages the failing import ran through, outermost first, without the user's own
    top-level package `own` and Python's import machinery."""
    out: list[str] = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith("<"):  # <frozen importlib._bootstrap>
            continue
        name = _top_package(frame.filename)
        if name and name != own and name not in out and name not in ("importlib", "explorer"):
            out.append(name)
    return out


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


def _torch_it_wants(dist: str) -> str:
    """The torch version an installed package pins (torchvision's 'torch==2.x.y'), or ''."""
    from importlib import metadata

    try:
        reqs = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return ""
    got = next((re.match(r"torch\s*==\s*([\w.+]+)", r) for r in reqs if re.match(r"torch\s*==", r)), None)
    return got.group(1) if got else ""


def library_failure(mod_name: str, exc: BaseException, first_line: str) -> str | None:
    """The sentence for a model module whose import failed inside an installed library, or None when the
    failure is in the user's own code (the caller's sentence stands)."""
    import torch

    own = mod_name.partition(".")[0]
    chain = import_chain(exc, own)
    if not chain:
        missing = exc.name if isinstance(exc, ModuleNotFoundError) and exc.name else ""
        if missing and missing.partition(".")[0] != own:  # the user's module imports a library not installed
            return f"importing {mod_name} failed: it imports {missing}, which is not installed."
        return None
    # torch raising for a library's call (torchvision registering its ops) is that library failing
    chain = [c for c in chain if c != "torch"] or chain
    failing, via = chain[-1], chain[0]
    ver = _version(failing)
    what = f"{failing} {ver}".strip()
    subject = f"{via} imports {what}, which" if via != failing else what
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"importing {mod_name} failed: {subject} needs {exc.name}, which is not installed."
    if re.search(r"operator torchvision::\w+ does not exist", first_line):
        base, wants = torch.__version__.split("+")[0], _torch_it_wants("torchvision")
        built = (f"it pins torch {wants}" if wants and wants.split("+")[0] != base
                 else "its C extension was built for another build of torch (a CUDA one beside this CPU torch)")
        pin = f"=={ver}" if ver and (not wants or wants.split("+")[0] == base) else ""
        return (f"importing {mod_name} failed: {subject} cannot load beside torch {torch.__version__}: {built} "
                f"({first_line}); install the torchvision made for this torch from the same index (for a CPU "
                f"torch: pip install torchvision{pin} --index-url https://download.pytorch.org/whl/cpu).")
    where = f"{what} (imported by {via})" if via != failing else what
    return f"importing {mod_name} failed in {where}: {type(exc).__name__}: {first_line}"
