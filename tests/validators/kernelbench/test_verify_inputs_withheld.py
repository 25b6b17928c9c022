"""An answer must not see a case's inputs before the harness calls forward on it (red team 2:
an answer read every input set at import, from files in its workspace, from the harness's
objects, or by drawing them again from the seed, computed PyTorch's outputs there, unwatched,
and returned them through a copy kernel: `passed` on any problem).

Inputs now come through the process's descriptor 0, one case at a time, only when the harness
asks for them just before that case's call; an answer that asks itself is `inputs_read_early`.
And they are drawn under a seed of their own, from a salt the answer never sees, so the seed it
can read (torch.initial_seed(), the one its parameters start from) does not give them."""

from __future__ import annotations

from schemas import Status
from validators.kernelbench import verify

PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.softmax(x, dim=1)

def get_inputs():
    return [torch.rand(8, 32)]

def get_init_inputs():
    return []
"""

# Draws the inputs again from the seed its parameters start from, as the problem does, and
# computes the outputs before any call.
FROM_THE_SEED = """import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        seed = torch.initial_seed()
        torch.manual_seed(seed)
        x = torch.rand(8, 32)
        self.pre = [(x, torch.softmax(x, dim=1))]
        g = torch.Generator().manual_seed(seed ^ 0x5EED)
        n = torch.randn((8, 32), generator=g, dtype=torch.float64).float()
        self.pre.append((n, torch.softmax(n, dim=1)))
    def forward(self, x):
        for k, y in self.pre:
            if torch.equal(k, x.cpu()):
                return y.clone().to(x.device)
        raise RuntimeError("an input the answer did not draw itself")
"""

# Reads the next case's inputs from the harness's descriptor at import.
FROM_THE_SOCKET = """import os
import torch
import torch.nn as nn

os.write(0, b"n")
size = int.from_bytes(os.read(0, 8), "little")
got = b""
while len(got) < size:
    got += os.read(0, size - len(got))

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
"""

# Nothing of the inputs lies in the workspace or in the harness's objects before a call.
LOOKS_AROUND = """import gc, glob, os
import torch
import torch.nn as nn

if glob.glob("**/*.safetensors", recursive=True):
    raise RuntimeError("input files in the workspace: %s" % glob.glob("**/*.safetensors", recursive=True))
shapes = [tuple(o.shape) for o in gc.get_objects() if isinstance(o, torch.Tensor)]
if (8, 32) in shapes:
    raise RuntimeError("a tensor of the inputs' shape exists before any call")

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)
"""


def test_inputs_are_not_drawn_from_the_seed_the_answer_can_read():
    result = verify(PROBLEM, FROM_THE_SEED, backend="cpu", fast=True, allow_torch_only=True)
    assert result.status == Status.RUNTIME_ERROR, (result.status, result.reason)
    assert "did not draw itself" in result.reason
    assert any("input salt" in n for n in result.notes), result.notes


def test_an_answer_that_reads_inputs_itself_is_rejected():
    result = verify(PROBLEM, FROM_THE_SOCKET, backend="cpu", fast=True, allow_torch_only=True)
    assert result.status == Status.REJECTED and result.rule == "inputs_read_early", \
        (result.status, result.reason)


def test_no_input_waits_in_the_workspace_or_the_harness_before_a_call():
    result = verify(PROBLEM, LOOKS_AROUND, backend="cpu", fast=True, allow_torch_only=True)
    assert result.status == Status.PASSED, (result.status, result.reason)


def test_the_input_salt_reproduces_the_inputs():
    from validators.kernelbench.verify import input_seeds

    assert input_seeds([1, 2], 7) == input_seeds([1, 2], 7)
    assert input_seeds([1, 2], 7) != input_seeds([1, 2], 8)
    assert input_seeds([1, 2], 7)[0] not in (1, 2)


def test_the_input_server_sends_only_what_is_asked_and_counts_requests():
    import socket

    from validators.kernelbench.answer import _InputServer

    server = _InputServer(b"first", [b"case-a", b"case-b"])
    theirs = socket.socket(fileno=server.theirs.fileno())  # the answer's end, as descriptor 0 is

    def frame() -> bytes:
        n = int.from_bytes(theirs.recv(8, socket.MSG_WAITALL), "little")
        return theirs.recv(n, socket.MSG_WAITALL)

    assert frame() == b"first"
    theirs.setblocking(False)
    try:
        theirs.recv(1)
        raise AssertionError("the server sent a case nobody asked for")
    except BlockingIOError:
        pass
    theirs.setblocking(True)
    theirs.sendall(b"n")
    assert frame() == b"case-a"
    theirs.sendall(b"nn")  # one more than there are cases: counted, nothing sent for it
    assert frame() == b"case-b"
    import time

    for _ in range(500):  # the second request of that pair may still be on its way
        if server.requests == 3:
            break
        time.sleep(0.01)
    theirs.detach()
    server.close()
    assert server.requests == 3 and not server.failed
