"""``python -m qcnmodel``."""

from qcnmodel.cli import run

run()
