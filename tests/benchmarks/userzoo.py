"""Third-party and hand-made models for `mkldnn-explorer model userzoo:NAME` (random weights, no download)."""
import torch
from torch import nn


def effnet_b0():
    from efficientnet_pytorch import EfficientNet
    return EfficientNet.from_name("efficientnet-b0")


def hf_resnet50():
    from transformers import ResNetConfig, ResNetModel
    return ResNetModel(ResNetConfig())


def hf_convnext():
    from transformers import ConvNextConfig, ConvNextModel
    return ConvNextModel(ConvNextConfig())


def hf_wav2vec2_features():
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    return Wav2Vec2Model(Wav2Vec2Config()).feature_extractor  # (N, L) raw audio in, adds the channel itself


class AudioFrontEnd(nn.Module):
    """(N, L) raw audio -> 1-D conv stack (the channel is added inside)."""

    def __init__(self):
        super().__init__()
        layers, c = [], 1
        for oc, k, s in ((64, 10, 5), (128, 3, 2), (128, 3, 2), (256, 3, 2), (256, 3, 2), (256, 2, 2)):
            layers += [nn.Conv1d(c, oc, k, s), nn.BatchNorm1d(oc), nn.ReLU()]
            c = oc
        self.net = nn.Sequential(*layers)

    def forward(self, wav):
        return self.net(wav.unsqueeze(1))


def audio_frontend():
    return AudioFrontEnd()


class TwoMics(nn.Module):
    """Two (N, L) inputs, one front end each."""

    def __init__(self):
        super().__init__()
        self.a, self.b = AudioFrontEnd(), AudioFrontEnd()

    def forward(self, left, right):
        return self.a(left) + self.b(right)


def two_mics():
    return TwoMics()


def _block(ci, co):
    return nn.Sequential(nn.Conv3d(ci, co, 3, padding=1), nn.BatchNorm3d(co), nn.ReLU(),
                         nn.Conv3d(co, co, 3, padding=1), nn.BatchNorm3d(co), nn.ReLU())


class UNet3d(nn.Module):
    """A small 3-D UNet: two levels down, one up, skip by concatenation."""

    def __init__(self, c=16):
        super().__init__()
        self.e1, self.e2, self.mid = _block(1, c), _block(c, 2 * c), _block(2 * c, 4 * c)
        self.pool = nn.MaxPool3d(2)
        self.up2, self.d2 = nn.Upsample(scale_factor=2), _block(6 * c, 2 * c)
        self.up1, self.d1 = nn.Upsample(scale_factor=2), _block(3 * c, c)
        self.head = nn.Conv3d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(self.pool(a))
        m = self.mid(self.pool(b))
        y = self.d2(torch.cat([self.up2(m), b], 1))
        y = self.d1(torch.cat([self.up1(y), a], 1))
        return self.head(y)


def unet3d():
    return UNet3d()
