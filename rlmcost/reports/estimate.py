"""`rlmcost ppo|grpo|dpo|...` and `rlmcost compare` as library calls: :func:`estimate` builds a
:class:`~rlmcost.run.Run` from keywords (:func:`run_of`) and evaluates it as `rlmcost ppo` does
(one computation); :func:`compare` evaluates one Run under several algorithms, leaving out the
inputs that do not apply to each (a group for DPO, a critic for GRPO)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.kinds import MODEL_KEYS, Kind, Role
from rlmcost.algorithms.model import Algorithm
from rlmcost.algorithms.options import KNOBS, Options
from rlmcost.deployment.resolve import uses_model
from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate, groups_from_text
from rlmcost.evaluation.view import Evaluation
from rlmcost.frozen import dataclass
from rlmcost.placement.groups import brackets
from rlmcost.run.spec import DTYPE_FIELDS, SCHEMA_VERSION, Run

Estimate = Evaluation
"""The name of :class:`~rlmcost.evaluation.view.Evaluation` before the Run (deprecated)."""
_ROLE_KEYS = {key: role.value for role, key in MODEL_KEYS.items()}  # ref= -> reference
_LAYOUT_FIELDS = ("tp", "pp", "cp", "ep", "sp", "zero", "ckpt", "micro_batch", "schedule",
                  "virtual_stages")  # fmt: skip


def estimate(algorithm: str | Algorithm | None = None, model: Any = None, **fields: Any
             ) -> Evaluation:  # fmt: skip
    """One iteration of ``algorithm`` (default PPO) on ``model`` (the actor; default
    Llama-3.1-8B), or of the ``base`` Run with the fields changed: :func:`rlmcost.evaluate` of
    :func:`keyword_run`, a placement as given (``rlmcost.estimate`` sizes a built-in one as
    ``--placement`` does: :func:`rlmcost.plan.sizing.estimate`)."""
    run, efficiency = keyword_run(algorithm, model, fields)
    return evaluate(run, efficiency=efficiency)


def keyword_run(algorithm: str | Algorithm | None, model: Any, fields: dict[str, Any]
                ) -> tuple[Run, Any]:  # fmt: skip
    """:func:`run_of` ``(algorithm, model, **fields)`` with a new query's defaults (PPO,
    Llama-3.1-8B; a ``base`` Run keeps its own), and ``fields``' ``efficiency`` (measured
    efficiencies, a :class:`~rlmcost.timing.Efficiency`, for the evaluation) apart."""
    fields = dict(fields)
    efficiency = fields.pop("efficiency", None)
    if "base" not in fields:  # None takes the default; an empty name is an error (get_model)
        algorithm = "ppo" if algorithm is None else algorithm
        model = "llama-3.1-8b" if model is None else model
    return run_of(algorithm, model, **fields), efficiency


def run_of(algorithm: str | Algorithm | None = None, model: Any = None, *, base: Run | None = None,
           **fields: Any) -> Run:  # fmt: skip
    """The :class:`~rlmcost.run.Run` of keyword arguments, over ``base`` (default ``Run()``:
    PPO on Llama-3.1-8B); SpecError for an unknown keyword.

    Models: ``model`` (the actor), ``critic``, ``reward``, ``ref``, ``judge``, ``teacher``,
    ``models`` (role -> model): names, config.json paths or :class:`~rlmcost.specs.ModelSpec`;
    ``reward="rule"`` is a rule-based verifier (no reward model), as ``--reward rule``.
    Workload: ``workload`` (a :class:`~rlmcost.specs.Workload`), ``batch``, ``group``,
    ``prompt_len``, ``response_len``, ``length_dist``. Layout: ``layout`` (a
    :class:`~rlmcost.parallel.layout.Layout`; its dp is the cluster's), or ``tp`` (None with
    no layout: TP per model), ``pp``, ``zero``, ``micro_batch``. Deployment: ``deployment``,
    ``placement``, ``groups`` (``--groups`` text), ``staleness``, ``offload`` (True or False:
    idle models in host memory, ``--offload-idle``; None: the framework's; the trainer's
    states: ``deployment={"train": {"offload": [...]}}``). Cluster: ``hardware``, ``gpus``,
    ``calibration``, ``host_bandwidth_bytes_per_s``, ``host_memory_gib`` (GiB per host),
    ``rank_order`` (:mod:`rlmcost.placement.rank_order`), ``price`` (USD per GPU-hour by
    accelerator, ``{"h20": 1.2}`` or ``"h20=1.2"``, over the cited list prices of
    :mod:`rlmcost.specs.prices`, as :func:`rlmcost.plan` and ``--price`` take them). Also
    ``options`` (an :class:`~rlmcost.algorithms.options.Options`) and ``counting`` (attention
    FLOPs).
    """
    _check_kinds(algorithm, base, fields)
    data = base.to_json() if base is not None else {
        "algorithm": {}, "models": {}, "workload": {}, "deployment": {}, "cluster": {}}  # fmt: skip
    f = dict(fields)
    if algorithm is not None:
        name = algorithm.name if isinstance(algorithm, Algorithm) else algorithm
        data["algorithm"]["name"] = name
    opts: Options | None = f.pop("options", None)
    if opts is not None:
        data["algorithm"].update(_options_data(opts))
    if model is not None:
        data["models"]["actor"] = model
    reward = f.get("reward")
    if isinstance(reward, str) and reward.strip().lower() == "rule":  # as `--reward rule`
        data["algorithm"]["rule_reward"] = True
        f.pop("reward")
    for key, role in _ROLE_KEYS.items():
        if f.get(key) is not None:
            data["models"][role] = f[key]
        f.pop(key, None)
    for role, m in (f.pop("models", None) or {}).items():
        role = str(role)
        if role not in (*_ROLE_KEYS.values(), "actor", *_OTHER_ROLES):
            have = ", ".join(("actor", *_ROLE_KEYS.values(), *_OTHER_ROLES))
            raise SpecError(f"models: unknown role {role!r}; use any of {have}")
        target = data["models"] if role in _ROLE_KEYS.values() or role == "actor" else \
            data["models"].setdefault("others", {})  # fmt: skip
        target[role] = m
    _workload_fields(data["workload"], f)
    dep = f.pop("deployment", None)
    framework = f.pop("framework", None)
    if dep is not None:  # a Deployment or its fields
        data["deployment"] = dict(dep) if isinstance(dep, Mapping) else dep.to_json()
    if framework is not None:  # else a new Run takes the default deployment's (Run.from_data)
        data["deployment"]["framework"] = framework
    d = data["deployment"]
    layout = f.pop("layout", None)
    tp = f.pop("tp", "unset")
    train = d.setdefault("train", {})
    if layout is not None:
        train.update({k: _plain(getattr(layout, k)) for k in _LAYOUT_FIELDS})
        data["cluster"]["dp"] = layout.dp
    elif tp is None:
        data["tp_per_model"] = True
    elif tp != "unset":
        train["tp"] = tp
    for key in ("pp", "zero", "micro_batch"):  # the layout's own when one is given
        if key in f:
            value = _plain(f.pop(key))
            if layout is None:
                train[key] = str(value) if key == "zero" else value  # zero=3 or "3"
    for key in ("placement", "staleness"):
        if f.get(key) is not None:
            d[key] = str(f[key]) if key == "placement" else f[key]
        f.pop(key, None)
    offload = f.pop("offload", None)
    if offload is not None:  # idle models wait in host memory (--offload-idle/--no-...)
        if not isinstance(offload, bool):
            raise SpecError(f"offload={offload!r:.60} must be True or False (idle models in "
                            "host memory, --offload-idle); the trainer's states go in "
                            "deployment={'train': {'offload': ['optimizer']}} (--offload)")
        d["offload_idle"] = offload
    groups = f.pop("groups", None)
    if groups is not None:
        text = groups if isinstance(groups, str) else ",".join(g.spec() for g in groups)
        given = [g.model_dump(mode="json") for g in groups_from_text(text)]
        for g, out in zip(() if isinstance(groups, str) else groups, given, strict=False):
            out.update(_kind_layouts(g))
        d["groups"] = given
    _cluster_fields(data["cluster"], f)
    counting = f.pop("counting", None)
    if counting is not None:
        data["attention"] = str(counting)
    if f:
        raise SpecError(f"unknown argument(s) {', '.join(sorted(f))}; see rlmcost.run_of's help")
    run = Run.from_data(data)
    if isinstance(groups, str) and any(b is not None and b.train for b in brackets(groups)):
        # bracket trainer keys go over the run's trainer layout (its preset's fields too)
        if run.tp_per_model:
            raise SpecError("groups: trainer keys in brackets build the group's trainer layout "
                            "from the run's; give tp= (tp=None picks each model's TP)")
        again = groups_from_text(groups, run.deployment.train)
        run = run.replace(deployment={"groups": [g.model_dump(mode="json") for g in again]})
    return run


_OTHER_ROLES = ("cost", "cost-critic", "prm")
"""The roles of ``models`` beyond the actor and the keyword roles (ModelsSpec.others)."""


def _kinds() -> dict[str, tuple[tuple[type, ...], str]]:
    """Each object-valued keyword of :func:`run_of` -> the types it takes and how to say
    them (a number or a name is checked by the Run itself)."""
    from rlmcost.deployment.spec import Deployment
    from rlmcost.parallel.layout import Layout
    from rlmcost.placement.device_groups import DeviceGroup
    from rlmcost.specs import HardwareSpec, Workload

    return {
        "layout": ((Layout,), "a rlmcost.parallel.layout.Layout, e.g. Layout(tp=8)"),
        "deployment": ((Deployment, Mapping), "a Deployment or a mapping of its fields"),
        "workload": ((Workload,), "a rlmcost.specs.Workload (or batch=, group=, ...)"),
        "options": ((Options,), "a rlmcost.algorithms.options.Options"),
        "models": ((Mapping,), "a mapping role -> model name, e.g. {'critic': '8b'}"),
        "hardware": ((str, HardwareSpec), "a name of `rlmcost hardware` or a HardwareSpec"),
        "groups": ((str, tuple, list), "--groups text, e.g. 'rollout=4,actor+reference=4', "
                   "or DeviceGroups"),
        "group_items": ((DeviceGroup,), "DeviceGroups (rlmcost.placement.device_groups)"),
    }


def _check_kinds(algorithm: Any, base: Any, fields: dict[str, Any]) -> None:
    """SpecError naming the keyword of :func:`run_of` given an object of the wrong kind,
    before an AttributeError deep inside could."""
    if algorithm is not None and not isinstance(algorithm, (str, Algorithm)):
        raise SpecError(f"algorithm={algorithm!r} must be a name (see `rlmcost algorithms`) "
                        "or an Algorithm")  # fmt: skip
    if base is not None and not isinstance(base, Run):
        raise SpecError(f"base={type(base).__name__} must be a rlmcost.Run")
    kinds = _kinds()
    for key, value in fields.items():
        if key in kinds and value is not None and not isinstance(value, kinds[key][0]):
            raise SpecError(f"{key}={value!r:.60} must be {kinds[key][1]}")
    groups = fields.get("groups")
    if isinstance(groups, (tuple, list)) and not all(isinstance(g, kinds["group_items"][0])
                                                     for g in groups):  # fmt: skip
        raise SpecError(f"groups must be {kinds['groups'][1]}")


def _kind_layouts(group: Any) -> dict[str, Any]:
    """A DeviceGroup's layouts per invocation kind as GroupLayouts fields (train, forward,
    engine)."""
    out: dict[str, Any] = {}
    for kind, lay in group.layouts:
        if str(kind) == "generate":
            out["engine"] = {"tp": lay.tp, "pp": lay.pp, "ep": lay.ep}
        else:
            out[str(kind)] = {k: _plain(getattr(lay, k)) for k in _LAYOUT_FIELDS}
    return out


def _workload_fields(w: dict[str, Any], f: dict[str, Any]) -> None:
    """Move the workload keywords of ``f`` into the Run's ``workload`` section ``w``."""
    wl = f.pop("workload", None)
    if wl is not None:
        w.update(prompts=wl.prompts, samples_per_prompt=wl.samples_per_prompt,
                 prompt_len=wl.prompt_len, response_len=wl.response_len,
                 **{k: str(getattr(wl, k)) for k in DTYPE_FIELDS})  # fmt: skip
    for key, field in (("batch", "prompts"), ("group", "samples_per_prompt"),
                       ("prompt_len", "prompt_len"), ("response_len", "response_len")):  # fmt: skip
        if f.get(key) is not None:
            w[field] = f[key]
        f.pop(key, None)
    dist = f.pop("length_dist", None)
    if dist is not None:
        w["length_dist"] = dist if isinstance(dist, str) else _length_text(dist)


def _cluster_fields(c: dict[str, Any], f: dict[str, Any]) -> None:
    """Move the cluster keywords of ``f`` into the Run's ``cluster`` section ``c``."""
    hw = f.pop("hardware", None)
    if hw is not None:
        c["hardware"] = hw if isinstance(hw, str) else hw.name
    for key in ("gpus", "calibration", "host_memory_gib", "rank_order"):
        if f.get(key) is not None:
            c[key] = str(f[key]) if isinstance(f[key], Path) else f[key]
        f.pop(key, None)
    host = f.pop("host_bandwidth_bytes_per_s", None)
    if host is not None:
        c["host_bandwidth_gb_per_s"] = host / 1e9
    price = f.pop("price", None)  # as rlmcost.plan(price=...) and --price take it
    if price is not None:
        from rlmcost.specs.prices import check_prices, parse_prices

        c["prices"] = parse_prices(price) if isinstance(price, str) else check_prices(price)


def _options_data(opts: Options) -> dict[str, Any]:
    if opts.teacher:  # the Run's teacher model sets it (Run.options)
        raise SpecError("name the teacher model (teacher='MODEL'), not Options(teacher=True)")
    return {k: (str(v) if k == "oversample" and v is not None else v)
            for k, v in vars(opts).items() if k != "teacher"}  # fmt: skip


def _plain(v: object) -> object:
    return str(v) if hasattr(v, "value") else v


def _length_text(dist: Any) -> str:
    """A :class:`~rlmcost.placement.lengths.LengthDist` in ``--length-dist`` syntax."""
    if dist.kind == "fixed":
        return "fixed"
    if dist.kind == "file":
        return f"file:{dist.path}"
    return f"{dist.kind}:" + ",".join(f"{v:g}" for v in dist.values)


# --------------------------------------------------------------------------------------------
# Side by side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Several algorithms on the same models, workload, layout and hardware."""

    estimates: tuple[Evaluation, ...]
    dropped: dict[str, tuple[str, ...]]  # algorithm -> inputs that do not apply to it
    run: Run | None = None  # the query compared (its algorithm: the first)

    def notes(self) -> list[str]:
        """One line per algorithm that left inputs out (``dpo: ignored group ...``)."""
        return [
            f"{name}: ignored {', '.join(what)} (does not apply)"
            for name, what in self.dropped.items()
            if what
        ]

    def to_json(self) -> dict[str, Any]:
        """``rlmcost compare --json``: each algorithm's :meth:`Evaluation.to_json` under
        ``algorithms`` (seconds, exact FLOPs and bytes, as each names its unit)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "command": "compare",
            "run": self.run.to_json() if self.run is not None else None,
            "compared": [e.algorithm.name for e in self.estimates],
            "algorithms": [e.to_json() for e in self.estimates],
            "notes": self.notes(),
        }


def applicable(alg: Algorithm, run: Run) -> tuple[Run, list[str]]:
    """``run`` for ``alg``: without the inputs that do not apply to it (a group for the
    offline family, a critic for a critic-free method, a knob it does not use, ...), and the
    names of those dropped."""
    dropped: list[str] = []
    models: dict[str, Any] = {}
    workload: dict[str, Any] = {}
    if run.workload.samples_per_prompt is not None and "K" not in alg.names:
        dropped.append("group")
        workload["samples_per_prompt"] = None
    for key, role in _ROLE_KEYS.items():
        if getattr(run.models, role) is not None and not uses_model(alg, Role(role)):
            dropped.append(key)
            models[role] = None
    a = run.algorithm
    changes: dict[str, Any] = {"name": alg.name}
    for knob in KNOBS:
        if getattr(a, knob.field) is not None and knob.name not in alg.names:
            changes[knob.field] = None
            dropped.append(knob.field)
    has_ref = Role.REFERENCE in alg.roles
    online = not alg.offline
    for field, drop in (
        ("recompute_logprobs", a.recompute_logprobs and not online),
        ("kl", not a.kl and not has_ref),
        ("ref_precomputed", a.ref_precomputed and (online or not has_ref)),
        ("rule_reward", a.rule_reward and not any(
            i.role is Role.REWARD and i.kind is Kind.FORWARD for i in alg.invocations)),
    ):  # fmt: skip
        if drop:
            changes[field] = field == "kl"  # back to the default
            dropped.append(field)
    from rlmcost.run.tier_groups import retier  # a size tier's groups: the algorithm's own

    return retier(run, run.replace(algorithm=changes, models=models, workload=workload)), dropped


def own_options(run: Run, alg: Algorithm, given: frozenset[str] = frozenset()) -> Run:
    """``run`` (built for ``run.algorithm.name``) as ``alg`` runs it under the run's framework:
    each option the framework implies (:func:`~rlmcost.frameworks.presets.preset_options`: the
    reward kind, the KL, log-prob recomputation) that the run holds at its own algorithm's
    implied value and ``given`` does not name takes ``alg``'s, so GRPO keeps NeMo RL's verifier
    beside PPO's reward model whichever `compare` names first; a reward model the run names
    keeps the reward model."""
    from rlmcost.frameworks.presets import preset_options
    from rlmcost.run.defaults import actor_moe, actor_params, actor_spec

    fw = run.deployment.framework
    if fw is None or alg.name == run.algorithm.name:
        return run
    actor = run.models.actor
    size = (actor_params(actor), actor_moe(actor), actor_spec(actor))
    mine = preset_options(fw, get_algorithm(run.algorithm.name), *size)
    theirs = preset_options(fw, alg, *size)
    given = given | ({"rule_reward"} if run.models.reward is not None else set())
    changes = {k: theirs[k] for k in ("recompute_logprobs", "kl", "rule_reward")
               if k not in given and getattr(run.algorithm, k) == mine[k] != theirs[k]}
    return run.replace(algorithm=changes) if changes else run


def _require_algorithms(algorithms: object) -> None:
    """SpecError unless ``algorithms`` is a non-empty list of names (a string had been read
    letter by letter: "unknown algorithm 'p'")."""
    if not algorithms or isinstance(algorithms, str):
        raise SpecError(f"algorithms={algorithms!r:.40}: give a list of at least one algorithm, "
                        "e.g. ['ppo', 'grpo', 'dpo'] (`rlmcost compare ppo grpo dpo`)")  # fmt: skip


def compare_runs(run: Run, algorithms: list[str],
                 given: frozenset[str] = frozenset()) -> Comparison:  # fmt: skip
    """``run`` evaluated for each of ``algorithms``, with each one's framework-implied options
    (:func:`own_options`; ``given``: the options the query gave, kept for all); inputs that do
    not apply to one of them are left out for it and listed in the notes."""
    _require_algorithms(algorithms)
    estimates, dropped = [], {}
    for name in dict.fromkeys(algorithms):
        alg = get_algorithm(name)
        one, gone = applicable(alg, own_options(run, alg, given))
        estimates.append(evaluate(one))
        dropped[alg.name] = tuple(gone)
    base = run.replace(algorithm={"name": get_algorithm(algorithms[0]).name})
    return Comparison(tuple(estimates), dropped, base)


def compare(algorithms: list[str], **fields: Any) -> Comparison:
    """:func:`compare_runs` of :func:`run_of` ``(algorithms[0], **fields)``."""
    _require_algorithms(algorithms)
    model = fields.pop("model", None)
    given = {"rule_reward"} if fields.get("reward") is not None else set()
    if fields.get("options") is not None:  # an Options gives every option
        given |= {"recompute_logprobs", "kl", "rule_reward"}
    return compare_runs(run_of(algorithms[0], model, **fields), algorithms, frozenset(given))

