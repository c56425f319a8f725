"""Loop models of QCN and its family, chosen by name and named configuration.

:data:`MODELS` maps a model name to its :class:`ModelSpec`: the model class, its parameter
class and its *variants*, named configurations of the model's options (e.g. the FOPDT
view's sampling-lag forms, or the QCN fluid model's switches that the validation against the
packet simulator compares). :func:`build_model` builds one model from a name, a parameter set
(instance, preset name or default), a variant and any operating-point, option or parameter
values; :func:`identify` names the model and variant of any model object, so that every
summary (:func:`qcnmodel.models.summary.summary`) says which model produced it.

The modules: :mod:`.fopdt` (first-order lag plus delay), :mod:`.qcn` (+ :mod:`._qcn_eqs`),
:mod:`.qcn_classes` (flow classes with their own RTTs), :mod:`.dcqcn` (+ :mod:`._dcqcn_eqs`),
:mod:`.ecm` (+ :mod:`._ecm_eqs`); :mod:`._base` holds what they share.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qcnmodel._errors import unknown_name
from qcnmodel.models._base import OPERATING_POINT

__all__ = ["MODELS", "ModelSpec", "build_model", "get_model", "identify"]

_TRUE, _FALSE = ("true", "on", "yes"), ("false", "off", "no")


def _load(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ModelSpec:
    """One entry of :data:`MODELS`.

    Attributes
    ----------
    name : str
        The registry name (``qcnmodel margins --model NAME``).
    model : str
        ``"module:Class"`` of the model (imported on first use: :attr:`cls`).
    params : str
        ``"module:Class"`` of its parameter class (:attr:`params_cls`).
    variants : mapping
        Variant name -> model options that differ from the class defaults; the first entry
        is the default variant, the one the surfaces (margins, check, report, sweeps) use:
        the validated configuration (for QCN and DCQCN; the class defaults elsewhere).
    description : str
        One line for listings.
    """

    name: str
    model: str
    params: str
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: {"default": {}})
    description: str = ""

    @property
    def cls(self) -> type:
        """The model class."""
        return _load(self.model)

    @property
    def params_cls(self) -> type:
        """The parameter class."""
        return _load(self.params)

    @property
    def default_variant(self) -> str:
        """Name of the default variant (the first)."""
        return next(iter(self.variants))

    def options(self) -> dict[str, Any]:
        """Model options (fields other than ``params`` and the operating point) -> default."""
        return {
            f.name: f.default
            for f in dataclasses.fields(self.cls)
            if f.name != "params" and f.name not in OPERATING_POINT
        }

    def model_fields(self) -> set[str]:
        """Every field of the model class except ``params``."""
        return {f.name for f in dataclasses.fields(self.cls)} - {"params"}

    def param_fields(self) -> set[str]:
        """Fields of the parameter class, with the names it accepts as aliases."""
        cls = self.params_cls
        return {f.name for f in dataclasses.fields(cls)} | set(getattr(cls, "_ALIASES", {}))

    def variant_options(self, variant: str | None) -> dict[str, Any]:
        """Options of ``variant`` (default: the default variant)."""
        name = self.default_variant if variant is None else variant
        if name not in self.variants:
            raise unknown_name("variant", "variant", name, self.variants, sort=False)
        return dict(self.variants[name])

    def make_params(self, params=None):
        """``params`` as this model's parameter object: None -> the defaults; a str -> the
        preset of that name; an instance of the parameter class -> itself."""
        cls = self.params_cls
        if params is None:
            return cls()
        if isinstance(params, str):
            if not hasattr(cls, "preset"):
                raise ValueError(
                    f"preset: {cls.__name__} has no presets (model {self.name!r}); "
                    "set its fields instead"
                )
            return cls.preset(params)
        if not isinstance(params, cls):
            raise ValueError(
                f"params: model {self.name!r} takes {cls.__name__}, got {type(params).__name__}"
            )
        return params


#: model name -> :class:`ModelSpec` (the single-RTT loop models; the flow-class model
#: :class:`~qcnmodel.models.qcn_classes.QCNClassesFluidModel` is built directly)
MODELS: dict[str, ModelSpec] = {
    "fopdt": ModelSpec(
        "fopdt",
        "qcnmodel.models.fopdt:FOPDTModel",
        "qcnmodel.params.qcn:QCNParams",
        {"first-order": {}, "zoh": {"lag": "zoh"}, "none": {"lag": "none"}},
        "first-order lag plus delay view of the QCN loop (the IBM Zurich deck)",
    ),
    "qcn": ModelSpec(
        "qcn",
        "qcnmodel.models.qcn:QCNFluidModel",
        "qcnmodel.params.qcn:QCNParams",
        {"packet": {}, "paper": {"fidelity": "paper"}},
        "QCN loop: renewal population of reaction points, every flow followed in its "
        "trajectories (packet fidelity, validated) or "
        "the cycle-averaged equations after Alizadeh et al. (paper)",
    ),
    "dcqcn": ModelSpec(
        "dcqcn",
        "qcnmodel.models.dcqcn:DCQCNFluidModel",
        "qcnmodel.params.dcqcn:DCQCNParams",
        {
            "packet": {"cnp_lag": "half-interval", "stage_memory": True, "trajectories": "agents"},
            "cnp-lag+stage-memory": {"cnp_lag": "half-interval", "stage_memory": True},
            "coalesce+stage-memory": {"notification": "coalesce", "stage_memory": True},
            "exact": {},
            "paper": {"linearisation": "paper", "fixed_point_method": "taylor"},
        },
        "DCQCN loop (Zhu et al., CoNEXT 2016): every flow followed with the packet rules in "
        "its trajectories, linearised from the fluid model with the CNP window's lag and the "
        "timer's stage memory (packet, validated), or the fluid model's trajectories",
    ),
    "ecm": ModelSpec(
        "ecm",
        "qcnmodel.models.ecm:ECMFluidModel",
        "qcnmodel.params.protocols:ECMParams",
        {"mean": {}, "increase": {"branch": "increase"}, "decrease": {"branch": "decrease"}},
        "ECM / BCN fluid model (Jiang and Jain, INFOCOM 2007)",
    ),
}


def get_model(name: str) -> ModelSpec:
    """The :class:`ModelSpec` of ``name`` (ValueError with the closest name if unknown)."""
    if name not in MODELS:
        raise unknown_name("model", "model", name, MODELS, sort=False)
    return MODELS[name]


def _coerce(value):
    """A model option given as text (CLI, ``--set``): booleans, integers, floats, or text."""
    if not isinstance(value, str):
        return value
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def build_model(name: str, params=None, variant: str | None = None, **settings):
    """Build the model ``name`` at one operating point.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS` (``fopdt``, ``qcn``, ``dcqcn``, ``ecm``).
    params : parameter object or str, optional
        The model's parameter set, or the name of a preset (default: the class defaults).
    variant : str, optional
        A named configuration of the model's options (default: the first of
        ``MODELS[name].variants``, the validated configuration).
    **settings
        Operating point (``rtt``, ``n_flows``, ``capacity``, ``ps``), model options, and
        parameter fields (unit strings accepted). A name that is a parameter field goes to
        the parameters, else to the model; the prefix ``model.`` (``**{"model.timer": True}``)
        forces a model option. Options given as text are read as booleans or numbers.

    Returns
    -------
    A model object (FOPDTModel, QCNFluidModel, DCQCNFluidModel or ECMFluidModel).

    Raises
    ------
    ValueError
        An unknown model, variant or setting (with the closest name), or a bad value.
    """
    spec = get_model(name)
    pobj = spec.make_params(params)
    options = spec.variant_options(variant)
    pfields, mfields = spec.param_fields(), spec.model_fields()
    pchanges: dict[str, Any] = {}
    for key, value in settings.items():
        if key.startswith("model."):
            opt = key[len("model.") :]
            if opt not in mfields:
                raise unknown_name(key, "model option", opt, mfields)
            options[opt] = _coerce(value)
        elif key in pfields:
            pchanges[key] = value
        elif key in mfields:
            options[key] = _coerce(value)
        else:
            raise unknown_name(key, "field", key, pfields | mfields)
    if pchanges:
        try:
            pobj = pobj.replace(**pchanges)
        except ValueError as exc:  # a rule between fields: say which given values it met
            named = str(exc).split(":", 1)[0]
            if named in pchanges:
                raise
            given = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v!r}"
                              for k, v in pchanges.items())  # fmt: skip
            raise ValueError(f"{exc} (with the given {given})") from None
    try:
        return spec.cls(pobj, **options)
    except TypeError as exc:  # pragma: no cover - the names are checked above
        raise ValueError(f"model options: {exc}") from None


def identify(model) -> tuple[str, str]:
    """``(model name, variant)`` of a model object.

    The variant is the registry variant whose options the model has exactly; otherwise the
    closest one (fewest differing options) followed by the differences, e.g.
    ``"base+sampling_lag=True"``. A class outside the registry gives its class name and
    ``"custom"``.
    """
    spec = next((s for s in MODELS.values() if type(model) is s.cls), None)
    if spec is None:
        return type(model).__name__, "custom"
    defaults = spec.options()
    have = {k: getattr(model, k) for k in defaults}
    best = None
    for vname, vopts in spec.variants.items():
        want = {**defaults, **vopts}
        diff = {k: v for k, v in have.items() if not _same(v, want[k])}
        if not diff:
            return spec.name, vname
        if best is None or len(diff) < len(best[1]):
            best = (vname, diff)
    vname, diff = best
    return spec.name, vname + "".join(f"+{k}={v}" for k, v in diff.items())


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # pragma: no cover - arrays and the like
        return False
