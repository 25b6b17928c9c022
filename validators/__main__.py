import sys

from validators.cli import main

sys.exit(main())
