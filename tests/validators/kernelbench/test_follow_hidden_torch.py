"""`torch_result` against a policy hunting for ways to let PyTorch (or the host) compute while a
kernel only hands the result on: each hole an audit found, closed by class, on a real
load_inline answer built and run in the sandbox (`--fast`), and honest answers that look like
them still passing."""

from __future__ import annotations

import pytest
from test_verify_extensions import PROBLEM, answer

from schemas import Status
from validators.kernelbench import verify
from validators.kernelbench.answer import emulation_available

pytestmark = pytest.mark.skipif(not emulation_available(),
                                reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) "
                                       "is not available")

LEAKY = "torch.nn.functional.leaky_relu"

HIDDEN = {
    # A subclass of the answer's own: its values were once not fingerprinted (never pure).
    "subclass": ("class P(torch.Tensor):\n    pass\n"
                 f"r = {LEAKY}(x.as_subclass(P), self.slope).as_subclass(torch.Tensor)\n"
                 "return ext.leaky(r.contiguous(), 1.0)"),
    # torch's result in another shape, the kernel's copy viewed back.
    "reshaped": (f"r = {LEAKY}(x.unsqueeze(0), self.slope)\n"
                 "return ext.leaky(r, 1.0).view_as(x)"),
    # torch's result transposed, copied, and transposed back by torch.
    "transposed": (f"r = {LEAKY}(x.t().contiguous(), self.slope)\n"
                   "return ext.leaky(r, 1.0).t().contiguous()"),
    # A kernel that copies the input (or nudges it by an ulp), then torch computes from it.
    "laundered": f"return {LEAKY}(ext.leaky(x, 1.0), self.slope)",
    "nudged": f"return {LEAKY}(ext.leaky(x, 0.99999994), self.slope)",
    # The host computes (numpy, a Python loop), a kernel copies it in.
    "numpy": ("import numpy as np\nv = x.numpy()\n"
              "r = torch.from_numpy(np.where(v > 0, v, v * self.slope).astype('float32'))\n"
              "return ext.leaky(r.to(x.device), 1.0)"),
    "python": ("r = torch.tensor([[v if v > 0 else v * self.slope for v in row] "
               "for row in x.tolist()], device=x.device)\nreturn ext.leaky(r, 1.0)"),
    # A genuine kernel on the first call of the process, torch's result copied afterwards.
    "warm_up": ("global CALLS\nCALLS = globals().get('CALLS', 0) + 1\n"
                "if CALLS == 1:\n    return ext.leaky(x, self.slope)\n"
                f"return ext.leaky({LEAKY}(x, self.slope), 1.0)"),
    # The kernel copies the input where that is the answer, torch's result elsewhere.
    "identity_or_torch": ("if bool((x >= 0).all()):\n    return ext.leaky(x, 1.0)\n"
                          f"return ext.leaky({LEAKY}(x, self.slope), 1.0)"),
    # The watch's records cleared through the mode torch hands to anyone who asks.
    "records_cleared": ("from torch.utils._python_dispatch import _get_current_dispatch_mode\n"
                        f"r = {LEAKY}(x, self.slope)\nm = _get_current_dispatch_mode()\n"
                        "for v in list(vars(m).values()):\n"
                        "    if hasattr(v, 'clear'):\n        v.clear()\n"
                        "return ext.leaky(r, 1.0)"),
    # The Python dispatch keys excluded around torch's work.
    "disabled": ("with torch._C._DisableTorchDispatch():\n"
                 f"    r = {LEAKY}(x, self.slope)\nreturn ext.leaky(r, 1.0)"),
    "no_dispatch": ("from torch.utils._mode_utils import no_dispatch\nwith no_dispatch():\n"
                    f"    r = {LEAKY}(x, self.slope)\nreturn ext.leaky(r, 1.0)"),
    "excluded": ("keys = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)\n"
                 "with torch._C._ExcludeDispatchKeyGuard(keys):\n"
                 f"    r = {LEAKY}(x, self.slope)\nreturn ext.leaky(r, 1.0)"),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_torch_or_host_work_handed_on_by_a_kernel_is_torch_result(name: str) -> None:
    r = verify(PROBLEM, answer(HIDDEN[name], name=f"leaky_{name}"), fast=True)
    assert (r.status, r.rule) == (Status.REJECTED, "torch_result"), (name, r.status, r.reason)
    if name in ("numpy", "python"):
        assert "host data" in r.reason


HONEST = {
    # Host reads and small host-made tensors for what the kernel is told, not what it computes.
    "host_metadata": ("import numpy as np\nslope = float(torch.tensor(self.slope))\n"
                      "assert np.isfinite(np.asarray(x)).all()\n"
                      "return ext.leaky(x.contiguous(), slope)"),
    # A subclass of the answer's own around the kernel's work.
    "subclass_around_the_kernel": ("class P(torch.Tensor):\n    pass\n"
                                   "y = ext.leaky(x, self.slope)\n"
                                   "return (y.as_subclass(P) * 1.0).as_subclass(torch.Tensor)"),
    # The kernel's work reshaped by torch.
    "reshaped_kernel_result": "return ext.leaky(x.reshape(-1), self.slope).view_as(x)",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_answers_that_look_like_them_pass(name: str) -> None:
    r = verify(PROBLEM, answer(HONEST[name], name=f"leaky_ok_{name}"), fast=True)
    assert r.status == Status.PASSED, (name, r.reason)

