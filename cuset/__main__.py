"""`python -m cuset`: see `cuset.cli`."""

import sys

from .cli import main

sys.exit(main())
