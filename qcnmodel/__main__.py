"""``python -m qcnmodel``."""

import sys

from qcnmodel.cli import main

sys.exit(main())
