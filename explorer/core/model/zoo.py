"""Reference networks, defined here from their papers (random weights: this is about time, not accuracy).

torchvision is not usable on this build (its wheels fail to load on the CPU build of torch 2.13.0 with
"operator torchvision::nms does not exist"), so the architectures are written out:

- resnet50: He et al., "Deep Residual Learning for Image Recognition" (2015), the bottleneck variant with
  the stride on the 3x3 conv (ResNet v1.5, as torchvision and oneDNN's resnet_50 batch file): 53 convs.
- resnet18: the same paper's basic-block network: 20 convs.
- mobilenet_v2: Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks" (2018), width 1.0,
  ReLU6, table 2 of the paper: 52 convs.
- tiny: a four-conv network (stem, depthwise, pointwise, residual) for tests and quick looks.

Module names follow torchvision's (conv1, layer1.0.conv1, features.3.conv.0.0, ...), so the inventory's
module paths read like the ones a user of torchvision knows.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn


# ---- ResNet -----------------------------------------------------------------------------------------
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers: list[int], num_classes: int = 1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2)
        self.layer3 = self._make_layer(block, 256, layers[2], 2)
        self.layer4 = self._make_layer(block, 512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def resnet50() -> nn.Module:
    return ResNet(Bottleneck, [3, 4, 6, 3])


def resnet18() -> nn.Module:
    return ResNet(BasicBlock, [2, 2, 2, 2])


# ---- MobileNetV2 ------------------------------------------------------------------------------------
def _make_divisible(v: float, divisor: int = 8) -> int:
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, inp: int, oup: int, kernel: int = 3, stride: int = 1, groups: int = 1):
        super().__init__(
            nn.Conv2d(inp, oup, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(oup),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden, 1))
        layers += [ConvBNReLU(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, oup, 1, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    # t (expansion), c (channels), n (repeats), s (stride): table 2 of the paper
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1))

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0):
        super().__init__()
        inp = _make_divisible(32 * width_mult)
        last = _make_divisible(1280 * max(1.0, width_mult))
        features: list[nn.Module] = [ConvBNReLU(3, inp, stride=2)]
        for t, c, n, s in self.SETTINGS:
            out = _make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(inp, out, s if i == 0 else 1, t))
                inp = out
        features.append(ConvBNReLU(inp, last, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v2() -> nn.Module:
    return MobileNetV2()


# ---- tiny -------------------------------------------------------------------------------------------
class Tiny(nn.Module):
    """Stem, depthwise, pointwise and a residual 3x3: four convs (two of them identical), for tests."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.bn = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, 1, 1, groups=8)
        self.pw = nn.Conv2d(8, 8, 1)
        self.res = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        y = self.pw(torch.relu(self.dw(x)))
        x = torch.relu(x + self.res(y))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def tiny() -> nn.Module:
    return Tiny()


BUILTINS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...], str]] = {
    "resnet50": (resnet50, (1, 3, 224, 224), "ResNet-50 (He et al. 2015, v1.5): 53 convolutions"),
    "resnet18": (resnet18, (1, 3, 224, 224), "ResNet-18 (He et al. 2015): 20 convolutions"),
    "mobilenet_v2": (mobilenet_v2, (1, 3, 224, 224), "MobileNetV2 (Sandler et al. 2018): 52 convolutions"),
    "tiny": (tiny, (1, 3, 32, 32), "a four-convolution test network"),
}
ALIASES = {"resnet-50": "resnet50", "resnet_50": "resnet50", "resnet-18": "resnet18", "resnet_18": "resnet18",
           "mobilenetv2": "mobilenet_v2", "mobilenet-v2": "mobilenet_v2"}


def builtin_name(text: str) -> str | None:
    key = text.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in BUILTINS else None


def build(name: str, seed: int = 0) -> nn.Module:
    """A built-in network in eval mode with seeded random weights (BatchNorm statistics included)."""
    fn = BUILTINS[builtin_name(name)][0]
    torch.manual_seed(seed)
    model = fn()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):  # non-trivial statistics, so folding BN is not a no-op
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()
