"""The model planner on third-party models: one row per model and mode (measured, predicted, pred/meas,
quality, note), each model planned by the real CLI in a fresh process.

The models come from users' own libraries, built from their code with random weights (no download), plus a
small 1-D audio front end and a small 3-D network written here:

    efficientnet_b0   efficientnet_pytorch  EfficientNet.from_name("efficientnet-b0")
    hf_resnet50       transformers          ResNetModel(ResNetConfig())          (returns a ModelOutput)
    hf_convnext       transformers          ConvNextModel(ConvNextConfig())      (depthwise 7x7, LayerNorm)
    hf_wav2vec2       transformers          Wav2Vec2Model(Wav2Vec2Config()).feature_extractor  ((N, L) raw audio,
                                            7 Conv1d, GroupNorm, the channel added inside)
    monai_unet3d      monai                 UNet(spatial_dims=3, ...)            (Conv3d down, ConvTranspose3d up,
                                            InstanceNorm3d)
    monai_densenet121 monai                 DenseNet121(spatial_dims=2, ...)     (concatenated dense blocks)
    hf_mobilevit      transformers          MobileViTModel(MobileViTConfig())    (convs + attention; its random
                                            weights vanish to denormal outputs, ~1e-39)
    hf_segformer      transformers          SegformerModel(SegformerConfig())    (overlapping patch convs,
                                            depthwise 3x3 in the MLP, attention)
    hf_regnet         transformers          RegNetModel(RegNetConfig())          (grouped 3x3, squeeze-excite)
    timm_resnet50d, timm_convnext_tiny, timm_mobilenetv3_large_100, timm_regnety_016,
    timm_efficientnetv2_rw_s, timm_repvit_m1, timm_fastvit_t8
                      timm                  timm.create_model(name, pretrained=False)  (BatchNormAct2d blocks,
                                            the to_mkldnn mode converts by hand)
    yolov8n           ultralytics           DetectionModel("yolov8n.yaml")       (from its yaml, no download)
    smp_unet_r34      segmentation_models_pytorch  Unet("resnet34", encoder_weights=None)
    asteroid_convtasnet  asteroid           ConvTasNet(n_src=2)                  ((N, L) raw audio: 98 Conv1d, one
                                            F.conv1d, one ConvTranspose1d decoder)
    ptv_x3d_xs        pytorchvideo          create_x3d(clip 4, crop 160)         (Conv3d, depthwise 3x3x3,
                                            squeeze-excite)
    audio1d           here                  takes (N, L) and adds the channel itself (Conv1d)
    seg3d             here                  a small Conv3d encoder-decoder

    pip install -e ".[zoo]"
    python tests/benchmarks/zoo_planner.py [--models efficientnet_b0,audio1d] [--modes all] [--mb 1]
        [--dtype f32] [--budget-ms 50] [--mode-budget-ms 500] [--threads N] [--out-dir /tmp/zoo_planner]

timm, ultralytics and segmentation_models_pytorch are not in the zoo extra (pyproject.toml says why: the
torchvision they need has no CPU build on the package index); a model whose library does not import here is
skipped with the planner's one sentence saying why. /work/zoovenv-like environments (a torch build whose
torchvision imports) run them.

Each model is `mkldnn-explorer model zoo_planner:NAME` run from this folder (so the factories below are
importable), with --csv; the table is read from the CSV's mode rows. A model the planner refuses is one row
with its one-line reason. The load average before and after each model is printed: the quality column says
whether a loop was disturbed, and a noisy row's ratio is uncertain, not a finding.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


# ---- the models (factories the CLI imports as zoo_planner:NAME) --------------------------------------
def efficientnet_b0() -> nn.Module:
    from efficientnet_pytorch import EfficientNet

    return EfficientNet.from_name("efficientnet-b0").eval()


def hf_resnet50() -> nn.Module:
    from transformers import ResNetConfig, ResNetModel

    return ResNetModel(ResNetConfig()).eval()


def hf_convnext() -> nn.Module:
    from transformers import ConvNextConfig, ConvNextModel

    return ConvNextModel(ConvNextConfig()).eval()


def hf_wav2vec2() -> nn.Module:
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    return Wav2Vec2Model(Wav2Vec2Config()).feature_extractor.eval()  # takes (N, L), adds the channel itself


def monai_unet3d() -> nn.Module:
    from monai.networks.nets import UNet

    return UNet(spatial_dims=3, in_channels=1, out_channels=2, channels=(16, 32, 64), strides=(2, 2)).eval()


def monai_densenet121() -> nn.Module:
    from monai.networks.nets import DenseNet121

    return DenseNet121(spatial_dims=2, in_channels=3, out_channels=10).eval()


class Audio1d(nn.Module):
    """A raw-waveform front end: (N, L) in, the channel added inside, strided Conv1d blocks."""

    def __init__(self):
        super().__init__()
        chans = [1, 32, 64, 64, 128]
        layers = []
        for a, b in zip(chans, chans[1:]):
            layers += [nn.Conv1d(a, b, 9, stride=4, padding=4), nn.BatchNorm1d(b), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(128, 10)

    def forward(self, wave):
        return self.head(self.body(wave.unsqueeze(1)).mean(-1))


def audio1d() -> nn.Module:
    return Audio1d().eval()


class Seg3d(nn.Module):
    """A small 3-D segmentation network: two Conv3d stages down, one transposed up, a 1x1x1 classifier."""

    def __init__(self, c: int = 16):
        super().__init__()

        def block(a, b, s=1):
            return nn.Sequential(nn.Conv3d(a, b, 3, stride=s, padding=1), nn.BatchNorm3d(b), nn.ReLU())

        self.enc = nn.Sequential(block(1, c), block(c, 2 * c, 2), block(2 * c, 2 * c))
        self.up = nn.ConvTranspose3d(2 * c, c, 2, stride=2)
        self.out = nn.Conv3d(c, 3, 1)

    def forward(self, x):
        return self.out(self.up(self.enc(x)))


def hf_mobilevit() -> nn.Module:
    from transformers import MobileViTConfig, MobileViTModel

    return MobileViTModel(MobileViTConfig()).eval()


def hf_segformer() -> nn.Module:
    from transformers import SegformerConfig, SegformerModel

    return SegformerModel(SegformerConfig()).eval()


def hf_regnet() -> nn.Module:
    from transformers import RegNetConfig, RegNetModel

    return RegNetModel(RegNetConfig()).eval()


def seg3d() -> nn.Module:
    return Seg3d().eval()


def _timm(name: str) -> nn.Module:
    import timm

    return timm.create_model(name, pretrained=False).eval()


def timm_resnet50d() -> nn.Module:
    return _timm("resnet50d")


def timm_convnext_tiny() -> nn.Module:
    return _timm("convnext_tiny")


def timm_mobilenetv3_large_100() -> nn.Module:
    return _timm("mobilenetv3_large_100")


def timm_regnety_016() -> nn.Module:
    return _timm("regnety_016")


def timm_efficientnetv2_rw_s() -> nn.Module:
    return _timm("efficientnetv2_rw_s")


def timm_repvit_m1() -> nn.Module:
    return _timm("repvit_m1")


def timm_fastvit_t8() -> nn.Module:
    return _timm("fastvit_t8")


def yolov8n() -> nn.Module:
    from ultralytics.nn.tasks import DetectionModel

    return DetectionModel("yolov8n.yaml", verbose=False).eval()  # the yaml ships with ultralytics: no download


def asteroid_convtasnet() -> nn.Module:
    from asteroid.models import ConvTasNet

    return ConvTasNet(n_src=2).eval()


def ptv_x3d_xs() -> nn.Module:
    from pytorchvideo.models.x3d import create_x3d

    return create_x3d(input_clip_length=4, input_crop_size=160, model_num_class=400).eval()


def smp_unet_r34() -> nn.Module:
    import segmentation_models_pytorch as smp

    return smp.Unet("resnet34", encoder_weights=None).eval()


MODELS = {  # name -> (library, input shape with mb 1)
    "efficientnet_b0": ("efficientnet_pytorch", "1,3,224,224"),
    "hf_resnet50": ("transformers", "1,3,224,224"),
    "hf_convnext": ("transformers", "1,3,224,224"),
    "hf_wav2vec2": ("transformers", "1,16000"),
    "monai_unet3d": ("monai", "1,1,32,32,32"),
    "monai_densenet121": ("monai", "1,3,224,224"),
    "hf_mobilevit": ("transformers", "1,3,256,256"),
    "hf_segformer": ("transformers", "1,3,224,224"),
    "hf_regnet": ("transformers", "1,3,224,224"),
    "audio1d": ("here (Conv1d, (N, L) input)", "1,16000"),
    "seg3d": ("here (Conv3d)", "1,1,32,32,32"),
    "timm_resnet50d": ("timm", "1,3,224,224"),
    "timm_convnext_tiny": ("timm", "1,3,224,224"),
    "timm_mobilenetv3_large_100": ("timm", "1,3,224,224"),
    "timm_regnety_016": ("timm", "1,3,224,224"),
    "timm_efficientnetv2_rw_s": ("timm", "1,3,288,288"),  # its default input size
    "timm_repvit_m1": ("timm", "1,3,224,224"),
    "timm_fastvit_t8": ("timm", "1,3,256,256"),  # its default input size
    "yolov8n": ("ultralytics", "1,3,640,640"),
    "smp_unet_r34": ("segmentation_models_pytorch", "1,3,256,256"),
    "asteroid_convtasnet": ("asteroid", "1,16000"),
    "ptv_x3d_xs": ("pytorchvideo", "1,3,4,160,160"),
}


def library_problem(lib: str) -> str:
    """'' when the model's library imports here; else the planner's one sentence saying why it does not."""
    import importlib

    from explorer.core.model.libraries.import_failure import library_failure
    from explorer.core.paths.base import one_line

    if lib.startswith("here"):
        return ""
    try:
        importlib.import_module(lib)
    except Exception as e:  # noqa: BLE001 - the reason is the row
        return library_failure("zoo_planner", e, one_line(e)) or f"{lib}: {type(e).__name__}: {one_line(e)}"
    return ""


# ---- the run ------------------------------------------------------------------------------------------
def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def plan(name: str, args, out_dir: Path) -> tuple[list[dict], str, str]:
    """(the CSV's mode rows, the CLI's one-line refusal or error, the answer line) of one model."""
    csv_path = out_dir / f"{name}_{args.dtype}_mb{args.mb}.csv"
    cmd = [sys.executable, "-m", "explorer", "model", f"zoo_planner:{name}", "--input", MODELS[name][1],
           "--mb", str(args.mb), "--dtype", args.dtype, "--modes", args.modes, "--budget-ms", str(args.budget_ms),
           "--mode-budget-ms", str(args.mode_budget_ms), "--no-trace", "--csv", str(csv_path), "--force"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    got = subprocess.run(cmd, cwd=HERE, env=env, capture_output=True, text=True)
    answer = next((ln[len("answer: "):] for ln in got.stdout.splitlines() if ln.startswith("answer: ")), "")
    if got.returncode != 0 or not csv_path.exists():
        why = (got.stderr.strip().splitlines() or [f"exit {got.returncode}"])[-1]
        return [], f"exit {got.returncode}: {why}", answer
    with open(csv_path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["kind"] == "mode"], "", answer


def _f(v: str, fmt: str = "{:.4g}") -> str:
    try:
        return fmt.format(float(v))
    except (TypeError, ValueError):
        return "-"


def _note(r: dict) -> str:
    if r["status"] != "ok":
        return r["error"][:160]
    note = r["note"]
    return (note[:160] + "...") if len(note) > 160 else note


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--modes", default="all")
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--budget-ms", type=float, default=50.0)
    ap.add_argument("--mode-budget-ms", type=float, default=500.0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out-dir", default="/tmp/zoo_planner")
    args = ap.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}; {time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime())} UTC")
    print("| model (library) | mode | status | measured ms | predicted ms | pred/meas | rel err | quality | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        lib = MODELS[name][0]
        problem = library_problem(lib)
        if problem:
            print(f"| {name} ({lib}) | - | - | - | - | - | - | - | skipped: {problem} |", flush=True)
            continue
        before = _loadavg()
        t0 = time.time()
        rows, refused, answer = plan(name, args, out_dir)
        if refused:
            print(f"| {name} ({lib}) | - | - | - | - | - | - | - | refused: {refused} |")
        for r in rows:
            meas, pred = r["measured_ms"], r["predicted_ms"]
            ratio = _f(str(float(pred) / float(meas)), "{:.2f}") if _f(pred) != "-" and _f(meas) != "-" else "-"
            print(f"| {name} ({lib}) | {r['mode']} | {r['status']} | {_f(meas)} | {_f(pred)} | {ratio} "
                  f"| {_f(r.get('rel_err', ''), '{:.2g}')} | {r['quality'] or '-'} | {_note(r)} |")
        print(f"<!-- {name}: load {before} -> {_loadavg()}, {time.time() - t0:.0f} s; answer: {answer} -->", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
