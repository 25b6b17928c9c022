"""The CPU probe of a module the meta device cannot describe (`.item()` in `__init__`, as in
Swin's stochastic-depth rule), when the module refuses the probe's small sizes because one
constant is not free: an `image_size` the model also takes from its own default. Before, the
plan ended in `error` ("Input image size (32*32) doesn't match model"); KernelBench level 3's
29_SwinMLP and 30_SwinTransformerV2 were judged so for every answer. Now the probe keeps that
constant as written and the rest scales, or the plan says `too_large` when nothing else can
shrink. The problems are written for these tests in KernelBench's shape."""

from __future__ import annotations

import pytest

from validators.module_scaling import DEFAULT_MAX_ELEMENTS, ModuleTaskError, scale_module
from validators.sandbox import sandbox_mode
from validators.torch_module import module_constants

pytestmark = pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")

TIED_IMAGE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, img_size=64, hidden=HIDDEN):
        super().__init__()
        self.img_size = img_size
        # A Python float from a tensor: no meta kernel can give it.
        self.scale = [x.item() for x in torch.linspace(0, 1, 4)][1]
        self.proj = nn.Linear(img_size, hidden)

    def forward(self, x):
        assert x.shape[-1] == self.img_size, (
            f"Input image size ({x.shape[-1]}) doesn't match model ({self.img_size}).")
        return self.proj(x) * self.scale


batch_size = 4096
image_size = 64


def get_inputs():
    return [torch.rand(batch_size, image_size, image_size)]


def get_init_inputs():
    return []
"""


def test_a_constant_tied_to_the_models_default_stays_and_the_rest_scales():
    scaled = scale_module(TIED_IMAGE.replace("HIDDEN", "16"))
    assert scaled.scaled
    assert module_constants(scaled.code) == {"batch_size": scaled.sizes["batch_size"],
                                             "image_size": 64}
    assert 1 <= scaled.sizes["batch_size"] < 4096
    assert scaled.sizes["batch_size"] * 64 * 64 <= DEFAULT_MAX_ELEMENTS


def test_nothing_else_to_shrink_is_too_large_not_an_error():
    # The weight [hidden, img_size] is over the cap whatever the batch: too_large, as the
    # problem cannot be judged at any size, never an `error` of the planner.
    with pytest.raises(ModuleTaskError) as info:
        scale_module(TIED_IMAGE.replace("HIDDEN", "8192"))
    assert info.value.reason == "too_large"
    assert "proj_weight" in info.value.detail and "'image_size': 64" in info.value.detail
