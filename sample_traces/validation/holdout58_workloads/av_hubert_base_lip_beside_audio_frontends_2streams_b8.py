"""AV-HuBERT Base (Shi et al., 2022), the audio-visual speech encoder, encoding 8 utterances of 3 s
(75 video frames at 25 fps and their filterbank features) as its fine-tuned speech recognizer does:
the lip-video front end on one side stream beside the audio front end on the other, then the fusion
and the 12-layer Transformer encoder (fifty-eighth hold-out: two concurrent chains of very unequal
weight in fp16, on one side the 3-D convolution stem over (8, 1, 75, 88, 88) and a ResNet-18 trunk
over the 600 frames at 22 x 22, some 80 kernels, 21 cuDNN convolutions of 1 to 36 GFLOP (some 380
GFLOP in all) with inference BatchNorms and PReLUs over maps of up to 150 MB, beside one projection
GEMM of 0.1 GFLOP and its transposes; then some 175 kernels on the current stream, the fusion, the
weight-normed convolutional position embedding and 12 post-norm layers over 600 token rows of d 768,
GEMMs of 0.7 to 2.8 GFLOP (some 110 GFLOP in all): a convolution-bound branch beside a near-empty
one, then a launch-bound Transformer). Laid out as facebookresearch/av_hubert's
``AVHubertModel.extract_finetune`` (as ``AVHubertSeq2Seq`` and ``HubertEncoderWrapper`` call it,
``modality_fuse="concat"``, ``audio_feat_dim`` 104, ``resnet_relu_type="prelu"``, the Base
configuration: ``encoder_layers`` 12, ``encoder_embed_dim`` 768, ``encoder_ffn_embed_dim`` 3072, 12
heads, ``layer_norm_first`` False, ``conv_pos`` 128, ``conv_pos_groups`` 16, no masking in fine-
tuned inference, no padding). Side stream 1, ``feature_extractor_video``: ``ResEncoder``'s
``frontend3D`` (``Conv3d(1, 64, (5, 7, 7), stride (1, 2, 2), padding (2, 3, 3), bias=False)``,
``BatchNorm3d``, PReLU, ``MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1))``), the frames folded into the
batch, the ResNet-18 ``trunk`` (``BasicBlock`` x [2, 2, 2, 2] at 64 to 512 channels, PReLU per
channel, 1 x 1 strided downsampling convolutions with BatchNorm), the global average pool, unfolded
to (8, 512, 75), then ``SubModel``'s ``proj`` ``Linear(512, 768)``; side stream 2,
``feature_extractor_audio``: the stacked log filterbanks (4 frames of 26, 104) through ``proj``
``Linear(104, 768)``. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current stream: the
audio and video features concatenated on the channels (audio first) to (8, 1536, 75),
``features_pen`` (their mean square in fp32, computed and dropped as in fine-tuning), ``LayerNorm
(1536)``, ``post_extract_proj`` ``Linear(1536, 768)``; fairseq's wav2vec 2.0 ``TransformerEncoder``:
``pos_conv`` (``Conv1d(768, 768, 128, padding 64, groups 16)`` under weight normalization over dim
2, its weight recomputed at each call, ``SamePad`` dropping the last frame, GELU) added, the
LayerNorm, then 12 ``TransformerSentenceEncoderLayer``s (post-norm: fairseq's ``MultiheadAttention``
as it runs through ``F.multi_head_attention_forward``, separate q, k, v ``Linear(768, 768)``,
``F.scaled_dot_product_attention``, ``out_proj``; residual, ``self_attn_layer_norm``; ``fc1`` 768 ->
3072, GELU, ``fc2``, residual, ``final_layer_norm``). fp16 on a GPU, weights included (the model
``.half()`` as av_hubert's ``infer_s2s.py`` runs it with ``common.fp16``; fp32 on a CPU), eval
(BatchNorm on random running statistics), no gradients, random weights (torch's defaults,
``ResEncoder``'s convolutions N(0, 2 / (k k c_out)) as it initializes them). Inputs (two input
sets), batch first: the mouth regions (8, 1, 75, 88, 88), normalized Gaussians, and the audio
features (8, 104, 75), Gaussian. Returns the encoder output (8, 75, 768).

    traceinspect profile av_hubert_base_lip_beside_audio_frontends_2streams_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

AUDIO_FEAT, CONV_POS, CONV_POS_GROUPS, ROI = 104, 128, 16, 88


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1, self.relu1 = nn.BatchNorm2d(cout), nn.PReLU(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2, self.relu2 = nn.BatchNorm2d(cout), nn.PReLU(cout)
        self.downsample: nn.Module | None = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        out = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu2(out + residual)


class ResEncoder(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.frontend3D = nn.Sequential(  # noqa: N815 - av_hubert's name
            nn.Conv3d(1, width, (5, 7, 7), (1, 2, 2), (2, 3, 3), bias=False),
            nn.BatchNorm3d(width),
            nn.PReLU(width),
            nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)),
        )
        blocks, cin = [], width
        for stage in range(4):
            cout = width * 2**stage
            blocks += [BasicBlock(cin, cout, 1 if stage == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.trunk = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1))
        self.backend_out = cin
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / n))

    def forward(self, x: Tensor) -> Tensor:
        b = x.shape[0]
        x = self.frontend3D(x)
        t = x.shape[2]
        x = x.transpose(1, 2).contiguous().flatten(0, 1)  # (b t, c, h, w)
        x = self.trunk(x).view(b, t, -1)
        return x.transpose(1, 2).contiguous()


class EncoderLayer(nn.Module):
    """fairseq's TransformerSentenceEncoderLayer, post-norm."""

    def __init__(self, d: int, ffn: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.self_attn_layer_norm, self.final_layer_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = (
            p(x).view(b, t, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = self.self_attn_layer_norm(x + self.out_proj(attn))
        return self.final_layer_norm(x + self.fc2(F.gelu(self.fc1(x))))


class AVHubert(nn.Module):
    def __init__(self, width: int, d: int, ffn: int, heads: int, layers: int) -> None:
        super().__init__()
        self.resnet = ResEncoder(width)
        self.video_proj = nn.Linear(self.resnet.backend_out, d)
        self.audio_proj = nn.Linear(AUDIO_FEAT, d)
        self.layer_norm = nn.LayerNorm(2 * d)
        self.post_extract_proj = nn.Linear(2 * d, d)
        conv = nn.Conv1d(d, d, CONV_POS, padding=CONV_POS // 2, groups=CONV_POS_GROUPS)
        nn.init.normal_(conv.weight, mean=0, std=math.sqrt(4 / (CONV_POS * d)))
        nn.init.constant_(conv.bias, 0)
        self.pos_conv = weight_norm(conv, name="weight", dim=2)
        self.encoder_layer_norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(EncoderLayer(d, ffn, heads) for _ in range(layers))

    def video(self, x: Tensor) -> Tensor:
        return self.video_proj(self.resnet(x).transpose(1, 2)).transpose(1, 2)

    def audio(self, x: Tensor) -> Tensor:
        return self.audio_proj(x.transpose(1, 2)).transpose(1, 2)

    def encode(self, audio: Tensor, video: Tensor) -> Tensor:
        features = torch.cat((audio, video), dim=1)
        features.float().pow(2).mean()  # features_pen, unused in fine-tuning
        x = self.post_extract_proj(self.layer_norm(features.transpose(1, 2)))
        x_conv = F.gelu(self.pos_conv(x.transpose(1, 2))[:, :, :-1])  # SamePad, GELU
        x = self.encoder_layer_norm(x + x_conv.transpose(1, 2))
        for layer in self.layers:
            x = layer(x)
        return x


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, roi, width, d, ffn, heads, layers = 2, 5, 24, 8, 64, 128, 4, 2
    else:
        batch, frames, roi, width, d, ffn, heads, layers = 8, 75, ROI, 64, 768, 3072, 12, 12
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = AVHubert(width, d, ffn, heads, layers)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d | nn.BatchNorm3d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(video: Tensor, audio: Tensor) -> Tensor:
        v, a = fork_join(device, streams, [lambda: model.video(video), lambda: model.audio(audio)])
        return model.encode(a, v)

    def make() -> tuple[Tensor, Tensor]:
        return (
            torch.randn(batch, 1, frames, roi, roi, device=device, dtype=dtype),
            torch.randn(batch, AUDIO_FEAT, frames, device=device, dtype=dtype),
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"AV-HuBERT Base-like: lip ResNet-18 front end (3-D stem, {frames} frames of {roi}px) "
        f"beside the audio projection on 2 side streams, concat fusion + {layers}-layer "
        f"encoder d{d}, b{batch}, {precision}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
