"""DINOv2's self-distillation (Oquab et al., 2023) on a batch of 4 images with a ViT-S/14 student
and its EMA teacher: the teacher on the 2 global crops, the student on the same global crops and
the student on the 8 local crops, each on its own side stream, then the DINO losses (fifty-seventh
hold-out: three concurrent chains under bf16 autocast, two of equal weight, 12 blocks of d 384 over
8 x 257 tokens with some 15 kernels a block, GEMMs of 0.6 to 2.4 GFLOP, beside one over 32 x 50
tokens, each ending in the DINO head's three GEMMs and its weight-normed 256 -> 65536 prototype
layer, the teacher's then Sinkhorn-Knopp centering in fp32, three iterations of reductions and
divisions over (65536, 8); then some 40 small softmax and reduction kernels for the losses on the
current stream: narrow GEMMs beside narrow GEMMs, mostly launch- and latency-bound). Laid out as
facebookresearch/dinov2's ``SSLMetaArch`` with ``vit_small`` (patch 14, d 384, 6 heads, MLP 1536,
GELU, LayerScale init 1e-5, no registers, no drop path in eval), ``DinoVisionTransformer``: the
patch embedding ``Conv2d(3, 384, 14, stride 14)``, the class token, the learned positions for 37 x
37 patches (518 pixels) interpolated bicubically to the crop's grid at each call
(``interpolate_pos_encoding``: 16 x 16 for 224-pixel global crops, 7 x 7 for 98-pixel local
crops), 12 pre-norm ``NestedTensorBlock``s (LayerNorm eps 1e-6, fused ``qkv`` ``Linear(384,
1152)``, ``F.scaled_dot_product_attention``, ``proj``, ``ls1``, LayerNorm, ``Mlp``, ``ls2``), the
final norm, the class token out; ``DINOHead`` (``Linear(384, 2048)``, GELU, ``Linear(2048, 2048)``,
GELU, ``Linear(2048, 256)``, L2 normalization, ``weight_norm(Linear(256, 65536, bias=False))``, its
weight recomputed from the parametrization at each call). Side stream 1, the teacher
(``teacher_backbone``, ``teacher_dino_head``) on the global crops in DINOv2's crop-major order,
its two chunks swapped, then ``sinkhorn_knopp_teacher`` at temperature 0.07 (3 iterations, one
process); side stream 2, the student backbone and head on the global crops, ``log_softmax`` at
temperature 0.1; side stream 3, the same on the local crops. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
After the join, on the current stream, ``DINOLoss``: the local-crop loss (each of the 8 local
chunks against each of the 2 teacher chunks, the negative mean of the sum of t log s) and the
global-crop loss (the student's global rows against the swapped teacher rows), their weighted sum
as ``SSLMetaArch`` forms it (the local loss over 18 terms). The iBOT masked-patch loss, the KoLeo
regularizer and the backward are not part of the step. fp32 weights under
``torch.autocast(dtype=torch.bfloat16)`` on a GPU (as DINOv2 trains in bf16 mixed precision; fp32
on a CPU), eval, no gradients, random weights (torch's defaults; the student and teacher
identical, as at the first iteration). Inputs (two input sets): the global crops (4, 2, 3, 224,
224) and the local crops (4, 8, 3, 98, 98), normalized Gaussians, batch first. Returns the total
loss, the local and the global loss (3,), fp32.

    traceinspect profile dinov2_vits14_student_teacher_3streams_b4.py
"""

from __future__ import annotations

import copy

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

PATCH, POS_GRID, STUDENT_TEMP, TEACHER_TEMP, SINKHORN_ITERS = 14, 37, 0.1, 0.07, 3


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.ls1 = nn.Parameter(1e-5 * torch.ones(d))
        self.ls2 = nn.Parameter(1e-5 * torch.ones(d))

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.ls1 * self.proj(attn)
        return x + self.ls2 * self.fc2(F.gelu(self.fc1(self.norm2(x))))


class DinoVisionTransformer(nn.Module):
    def __init__(self, d: int, heads: int, depth: int, pos_grid: int) -> None:
        super().__init__()
        self.pos_grid = pos_grid
        self.patch_embed = nn.Conv2d(3, d, PATCH, stride=PATCH)
        self.cls_token = nn.Parameter(1e-6 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 1 + pos_grid**2, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d, eps=1e-6)

    def forward(self, x: Tensor) -> Tensor:
        grid = (x.shape[-2] // PATCH, x.shape[-1] // PATCH)
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        d = x.shape[-1]
        patch_pos = self.pos_embed[:, 1:].reshape(1, self.pos_grid, self.pos_grid, d)
        patch_pos = F.interpolate(patch_pos.permute(0, 3, 1, 2), size=grid, mode="bicubic")
        pos = torch.cat((self.pos_embed[:, :1], patch_pos.permute(0, 2, 3, 1).flatten(1, 2)), 1)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + pos.to(x.dtype)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)[:, 0]


class DINOHead(nn.Module):
    def __init__(self, d: int, hidden: int, bottleneck: int, prototypes: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, bottleneck),
        )  # fmt: skip
        self.last_layer = weight_norm(nn.Linear(bottleneck, prototypes, bias=False))

    def forward(self, x: Tensor) -> Tensor:
        return self.last_layer(F.normalize(self.mlp(x), dim=-1, p=2))


def sinkhorn_knopp_teacher(teacher_output: Tensor, temp: float, iters: int) -> Tensor:
    q = torch.exp(teacher_output.float() / temp).t()
    b, k = q.shape[1], q.shape[0]
    q = q / torch.sum(q)
    for _ in range(iters):
        q = q / torch.sum(q, dim=1, keepdim=True) / k
        q = q / torch.sum(q, dim=0, keepdim=True) / b
    return (q * b).t()


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, d, heads, depth, head_dims, pos_grid, glob, loc, n_local = (
            2, 32, 2, 2, (64, 16, 128), 4, 28, 14, 2,
        )  # fmt: skip
    else:
        batch, d, heads, depth, head_dims, pos_grid, glob, loc, n_local = (
            4, 384, 6, 12, (2048, 256, 65536), POS_GRID, 224, 98, 8,
        )  # fmt: skip
    student = nn.ModuleDict(
        {
            "backbone": DinoVisionTransformer(d, heads, depth, pos_grid),
            "head": DINOHead(d, *head_dims),
        }
    )
    student = student.to(device).eval()
    teacher = copy.deepcopy(student).eval()
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
    streams = side_streams(device, 3)

    def teacher_branch(global_crops: Tensor) -> Tensor:
        with autocast:
            out = teacher["head"](teacher["backbone"](global_crops))
        a, b = out.chunk(2)
        return sinkhorn_knopp_teacher(torch.cat((b, a)), TEACHER_TEMP, SINKHORN_ITERS)

    def student_branch(crops: Tensor) -> Tensor:
        with autocast:
            out = student["head"](student["backbone"](crops))
        return F.log_softmax(out.float() / STUDENT_TEMP, dim=-1)

    @torch.no_grad()
    def step(global_crops: Tensor, local_crops: Tensor) -> Tensor:
        g = global_crops.transpose(0, 1).reshape(-1, *global_crops.shape[2:])  # crop-major
        loc_ = local_crops.transpose(0, 1).reshape(-1, *local_crops.shape[2:])
        t, s_global, s_local = fork_join(
            device,
            streams,
            [lambda: teacher_branch(g), lambda: student_branch(g), lambda: student_branch(loc_)],
        )
        t_chunks = t.chunk(2)
        local_loss = t.new_zeros(())
        for s in s_local.chunk(n_local):
            for tc in t_chunks:
                local_loss = local_loss - torch.sum(tc * s, dim=-1).mean()
        global_loss = -torch.sum(t * s_global, dim=-1).mean()
        n_terms = n_local * 2 + 2
        total = local_loss / n_terms + 2 * global_loss / n_terms
        return torch.stack((total, local_loss, global_loss))

    def make() -> tuple[Tensor, Tensor]:
        return (
            torch.randn(batch, 2, 3, glob, glob, device=device),
            torch.randn(batch, n_local, 3, loc, loc, device=device),
        )

    inputs = [make() for _ in range(2)]
    precision = "bf16 autocast" if device.type == "cuda" else "fp32"
    description = (
        f"DINOv2 ViT-S/14-like ({depth} blocks d{d}) teacher on 2 global crops + Sinkhorn beside "
        f"student on global and on {n_local} local crops, DINO head {head_dims[-1]} prototypes, "
        f"on 3 side streams, DINO losses, b{batch}, {precision}"
    )
    return Built(step, inputs, description, [student, teacher])


if __name__ == "__main__":
    main(build, __doc__)
