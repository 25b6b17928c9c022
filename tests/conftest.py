"""The stand-ins (a GitHub REST server, an OpenAI-compatible server) and scripted answers live
beside the tests that introduced them; end-to-end tests of other packages import them too.
Stand-ins more than one package's tests use (the Hugging Face Hub) live in tests/ itself."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE / "sources", HERE / "builder"):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
