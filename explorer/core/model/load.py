"""What the user names, loaded: a built-in network, a package.module:callable, a saved torch.export
program (.pt2) or a TorchScript file, and the --input shape. Every refusal is one InputError sentence."""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from explorer.core.errors import InputError

DEFAULT_INPUT = (1, 3, 224, 224)
MODEL_FILE_SUFFIXES = (".pt2", ".pt", ".ts", ".pth", ".jit", ".torchscript")


@dataclass
class LoadedModel:
    module: object  # nn.Module, ScriptModule or the GraphModule of an exported program
    label: str  # what the user typed, or the built-in's name
    kind: str  # builtin | callable | export | torchscript
    default_input: tuple[int, ...] = DEFAULT_INPUT
    expected_input: tuple[int, ...] | None = None  # an exported program's static input shape


def parse_input(text: str | None) -> tuple[int, ...] | None:
    """'1,3,224,224' -> (1, 3, 224, 224). Raises InputError (one sentence)."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).replace("x", ",").split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--input {text!r} is not a shape of positive whole numbers such as 1,3,224,224.", "input")
    if not 2 <= len(parts) <= 5:
        raise InputError(f"--input {text!r} has {len(parts)} dimensions; a convolution input has 3 (N,C,L), "
                         f"4 (N,C,H,W) or 5 (N,C,D,H,W).", "input")
    return tuple(int(p) for p in parts)


def load_model(text: str, folder: str | None = None) -> LoadedModel:
    """A built-in name, package.module:callable (imported from `folder`, default the current one, or
    sys.path), or a .pt2 / TorchScript file (relative to `folder`). Raises InputError."""
    from torch import nn

    from explorer.core.model import zoo as model_zoo

    if not isinstance(text, str) or not text.strip():
        raise InputError("no model given; name a built-in (" + ", ".join(model_zoo.BUILTINS)
                         + "), a package.module:callable, or a .pt2 / TorchScript file.", "model")
    text = text.strip()
    name = model_zoo.builtin_name(text)
    if name is not None:
        return LoadedModel(model_zoo.build(name), name, "builtin", model_zoo.BUILTINS[name][1])
    p = Path(text)
    if folder and not p.is_absolute():
        p = Path(folder) / p
    if p.suffix.lower() in MODEL_FILE_SUFFIXES or (p.is_file() and ":" not in text):
        return _load_file(p, text)
    if ":" not in text:
        raise InputError(f"unknown model {text!r}: name a built-in ({', '.join(model_zoo.BUILTINS)}), a "
                         f"package.module:callable, or a .pt2 / TorchScript file.", "model")
    mod_name, _, attr = text.partition(":")
    if not mod_name or not attr:
        raise InputError(f"{text!r} is not package.module:callable (both parts are needed).", "model")
    here = folder or os.getcwd()
    if here not in sys.path and (folder or "" not in sys.path):
        sys.path.insert(0, here)  # the current folder (the caller's, in the measuring process), as `python -m` would
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        raise InputError(f"no module named {e.name or mod_name!r} (looked in the current folder and sys.path).",
                         "model") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import: one line
        raise InputError(f"importing {mod_name} failed: {type(e).__name__}: {_first_line(e)}", "model") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {mod_name!r} has no attribute {attr!r}.", "model")
        obj = getattr(obj, part)
    if isinstance(obj, nn.Module):
        model = obj
    else:
        if not callable(obj):
            raise InputError(f"{text} is a {type(obj).__name__}, not a callable that returns a torch.nn.Module.",
                             "model")
        try:
            model = obj()
        except SystemExit as e:  # the factory's own sys.exit: not ours to obey, one sentence
            raise InputError(f"{text}() called sys.exit({e.code!r}) instead of returning a torch.nn.Module.",
                             "model") from None
        except KeyboardInterrupt:  # in the measuring process Ctrl+C is ignored: the factory raised it
            raise InputError(f"{text}() raised KeyboardInterrupt instead of returning a torch.nn.Module.",
                             "model") from None
        except Exception as e:  # noqa: BLE001
            raise InputError(f"{text}() raised {type(e).__name__}: {_first_line(e)}", "model") from None
        if not isinstance(model, nn.Module):
            raise InputError(f"{text}() returned an object of type {type(model).__name__}, not a torch.nn.Module.",
                             "model")
    model.eval()
    return LoadedModel(model, text, "callable")


def _load_file(p: Path, text: str) -> LoadedModel:
    import torch

    if not p.is_file():
        raise InputError(f"cannot open model file {text!r}: no such file.", "model")
    if p.suffix.lower() == ".pt2":
        try:
            with _torch_logs_silenced():  # torch logs its own traceback of a bad archive before raising
                ep = torch.export.load(str(p))
        except Exception as e:  # noqa: BLE001
            raise InputError(f"cannot load {text!r} as a torch.export program: {type(e).__name__}: "
                             f"{_first_line(e)}", "model") from None
        shape = _export_input_shape(ep)
        return LoadedModel(ep.module(), text, "export", shape or DEFAULT_INPUT, shape)
    try:
        m = torch.jit.load(str(p), map_location="cpu")
    except Exception as e:  # noqa: BLE001
        raise InputError(f"cannot load {text!r} as TorchScript (or a .pt2 torch.export program): "
                         f"{type(e).__name__}: {_first_line(e)}", "model") from None
    return LoadedModel(m.eval(), text, "torchscript")


class _torch_logs_silenced:
    """No logging records below CRITICAL while loading: the tool's one sentence says what went wrong."""

    def __enter__(self):
        import logging

        self._prev = logging.root.manager.disable
        logging.disable(logging.ERROR)

    def __exit__(self, *exc):
        import logging

        logging.disable(self._prev)
        return False


def _export_input_shape(ep) -> tuple[int, ...] | None:
    users = set(ep.graph_signature.user_inputs)
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in users and "val" in n.meta:
            try:
                return tuple(int(d) for d in n.meta["val"].shape)
            except (TypeError, ValueError):  # symbolic dims: no fixed shape
                return None
    return None


def _first_line(e: BaseException) -> str:
    from explorer.core.paths.base import one_line

    return one_line(e)
