"""One comparison of the validation: :class:`Row` (a line of the report and of ``--json``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from qcnmodel._io import to_jsonable

__all__ = ["Row"]


@dataclass
class Row:
    """One comparison: a model value against a simulated one, with its tolerance and source.

    ``key`` identifies the comparison across runs (check, quantity, case and variant), so a
    known disagreement (:mod:`qcnmodel.validation.findings`) can be matched to it.
    """

    check: str
    quantity: str
    parameters: str
    model_variant: str
    model: object
    simulated: object
    error: object
    tolerance: object
    tolerance_reason: str
    passed: bool
    units: str = ""
    note: str = ""
    key: str = ""
    #: a known disagreement: the finding that explains it ("" if none)
    finding: str = ""

    @property
    def model_name(self) -> str:
        """The registry model the row compares: "dcqcn" for the DCQCN pairs, else "qcn"
        (both name their validated default ``packet``)."""
        return "dcqcn" if self.check.startswith("dcqcn") else "qcn"

    @property
    def label(self) -> str:
        """The variant as the report's tables name it (``dcqcn packet`` for DCQCN rows)."""
        return self.model_variant if self.model_name == "qcn" else f"dcqcn {self.model_variant}"

    def as_dict(self) -> dict:
        """JSON-ready dict (:func:`qcnmodel._io.to_jsonable`: numpy values converted, NaN ->
        None, infinities -> "inf" / "-inf")."""
        d = to_jsonable(asdict(self))
        d["passed"] = bool(d["passed"])
        return d
