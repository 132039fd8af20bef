"""`Run`: one typed, frozen, validated description of a query (DESIGN.md, "One Run").

A Run says everything an evaluation needs, in five sections:

* ``algorithm`` (:class:`AlgorithmSpec`): the algorithm's name and its knobs (epochs,
  mini-batches, oversampling, recomputed log-probs, KL, a rule-based reward);
* ``models`` (:class:`ModelsSpec`): the model of each role (built-in name, alias, Hugging Face
  id, config.json path, or a full :class:`~rlmcost.specs.ModelSpec`); a role left out takes
  its fallback's model (critic -> actor, ...);
* ``workload`` (:class:`WorkloadSpec`): B, K, S, T (None: the algorithm's defaults) and the
  response-length distribution;
* ``deployment`` (:class:`~rlmcost.deployment.spec.Deployment`): how the run is launched:
  placement, device groups with their layouts, the trainer's layout, engine, offload, LoRA;
* ``cluster`` (:class:`ClusterSpec`): the accelerator, GPU count, data-parallel degree, host
  link and calibration profile.

It reads and writes YAML and JSON (:meth:`Run.from_yaml`, :meth:`Run.from_json`,
:meth:`Run.to_yaml`, :meth:`Run.to_json`) and says the CLI line that reproduces it
(:meth:`Run.to_command`, in :mod:`rlmcost.run.command`). Every field has a default, so ``Run()``
is a PPO iteration of Llama-3.1-8B on one H100 (the CLI's defaults). Light to import
(pydantic only)."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from rlmcost.algorithms.options import DEFAULT_HARDWARE, Options
from rlmcost.choices import AttnCounting
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.run.schema_envelope import SCHEMA_VERSION as SCHEMA_VERSION  # re-exported
from rlmcost.run.workload_spec import DTYPE_FIELDS as DTYPE_FIELDS  # re-exported
from rlmcost.run.workload_spec import WorkloadSpec as WorkloadSpec  # re-exported
from rlmcost.specs import ModelSpec
from rlmcost.specs.registry import pool_hint
from rlmcost.specs.validation import Checked

_STRICT = ConfigDict(frozen=True, extra="forbid")


class AlgorithmSpec(Checked):
    """The algorithm (a name of `rlmcost algorithms`) and its knobs; None = the knob's default
    (:data:`rlmcost.algorithms.options.KNOBS`)."""

    model_config = _STRICT

    name: str = Field(default="ppo", description="ppo, grpo, dpo or a variant")
    epochs: int | None = Field(default=None, ge=1, description="E_ppo, PPO epochs")
    mini_batches: int | None = Field(default=None, ge=1, description="N_mini per epoch")
    global_batch: int | None = Field(
        default=None, ge=1, description="samples (B x K) per optimizer step, N_mini = B x K / "
        "this (NeMo RL policy.train_global_batch_size); not with mini_batches",
    )
    oversample: str | None = Field(default=None, description="rho, generated / kept (DAPO), "
                                   "exact: '3', '1.5' or '3/2'")
    prm_steps: int | None = Field(default=None, ge=1, description="N_step scored by a PRM")
    judge_len: int | None = Field(default=None, ge=1, description="T_j, judge tokens")
    recompute_logprobs: bool = Field(default=False, description="old log-probs by an extra "
                                     "actor forward (verl, OpenRLHF)")
    kl: bool = Field(default=True, description="False: KL coefficient 0, no reference model")
    ref_precomputed: bool = Field(default=False, description="offline: reference once")
    rule_reward: bool = Field(default=False, description="a rule-based verifier, no RM")
    kv_scales: bool | None = Field(default=None, description="an actor forward calibrates the "
                                   "FP8 KV-cache scales after each update; None: NeMo RL's")

    @field_validator("oversample", mode="before")
    @classmethod
    def _fraction_text(cls, v: object) -> object:
        if v is None:
            return None
        if isinstance(v, Fraction):
            return str(v)
        if isinstance(v, int | float):
            return str(Fraction(v).limit_denominator(10**6))
        try:
            Fraction(str(v))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"oversample {v!r} is not a number (e.g. 3, 1.5 or 3/2)") from None
        return str(v)

    @model_validator(mode="after")
    def _one_batching(self) -> "AlgorithmSpec":
        if self.mini_batches is not None and self.global_batch is not None:
            raise ValueError(f"--mini-batches {self.mini_batches} and --global-batch "
                             f"{self.global_batch} both set the steps; give one")  # fmt: skip
        return self

    def options(self, samples: int | None = None, kv_default: bool = False,
                teacher: bool = False) -> Options:  # fmt: skip
        """The :class:`~rlmcost.algorithms.options.Options` of these knobs; ``samples`` (B x K,
        :meth:`Run.options`) turns a global batch into its mini-batches; ``teacher``: a teacher
        model is named (:meth:`Run.options`)."""
        from rlmcost.run.defaults import global_steps

        gb = self.global_batch
        mini = self.mini_batches if gb is None or samples is None else global_steps(gb, samples)
        return Options(
            epochs=self.epochs, mini_batches=mini,
            oversample=Fraction(self.oversample) if self.oversample is not None else None,
            prm_steps=self.prm_steps, judge_len=self.judge_len,
            recompute_logprobs=self.recompute_logprobs, kl=self.kl,
            ref_precomputed=self.ref_precomputed, rule_reward=self.rule_reward,
            kv_scales=kv_default if self.kv_scales is None else self.kv_scales, teacher=teacher,
        )  # fmt: skip


ModelRef = str | ModelSpec
"""A model: a built-in name, alias, Hugging Face id or config.json path, or a full spec."""


class ModelsSpec(Checked):
    """The model of each role; None: the role's fallback (critic -> actor, cost critic ->
    critic, cost / PRM -> reward -> actor, reference -> actor)."""

    model_config = _STRICT

    actor: ModelRef = Field(default="llama-3.1-8b", description="the policy being trained")
    critic: ModelRef | None = None
    reward: ModelRef | None = None
    reference: ModelRef | None = None
    judge: ModelRef | None = None
    teacher: ModelRef | None = Field(default=None, description="opd's teacher model")
    others: dict[str, ModelRef] = Field(
        default_factory=dict, description="any other role: cost, cost-critic, prm"
    )

    def given(self) -> dict[str, ModelRef]:
        """The roles named (other than the actor), role -> model."""
        named = {"critic": self.critic, "reward": self.reward, "reference": self.reference,
                 "judge": self.judge, "teacher": self.teacher}  # fmt: skip
        return {**{r: m for r, m in named.items() if m is not None}, **self.others}


class ClusterSpec(Checked):
    """Where the run runs: the accelerator and how many, and what calibrates the time."""

    model_config = _STRICT

    hardware: str = Field(default=DEFAULT_HARDWARE, description="see `rlmcost hardware`")
    gpus: int | None = Field(
        default=None, ge=1, description="GPUs in all (None: tp*pp*dp, or the groups' sum)"
    )
    dp: int | None = Field(
        default=None, ge=1, description="data-parallel degree (None: gpus / (tp*pp*cp))"
    )
    host_bandwidth_gb_per_s: float | None = Field(
        default=None, gt=0, description="host link GB/s per direction (None: the device's)"
    )
    host_memory_gib: float | None = Field(default=None, gt=0, description="host memory per "
        "host in GiB, every accelerator's (None: the reference system's)")  # fmt: skip
    calibration: str | None = Field(default=None, description="profile path (None: the one "
                                    "shipped for the hardware)")  # fmt: skip
    rank_order: Literal["topology", "random"] = Field(default="topology", description="hosts "
        "in rank order: by NVLink domain, or at random (rlmcost.placement.rank_order)")  # fmt: skip
    prices: dict[str, float] = Field(
        default_factory=dict,
        description="USD per GPU-hour by hardware name, over the cited list prices of "
        "rlmcost.specs.prices (e.g. {'h100': 2.5, 'h20': 1.2})",
    )

    @field_validator("hardware")
    @classmethod
    def _one_device(cls, v: str) -> str:
        """A pool (``h20:8,h100:8``) is `plan`'s; one run names its groups' devices."""
        if ":" in v or "," in v:
            raise ValueError(pool_hint(v))
        return v

    @field_validator("host_bandwidth_gb_per_s", "host_memory_gib", mode="before")
    @classmethod
    def _finite(cls, v: Any, info: ValidationInfo) -> Any:
        """A positive, finite amount (:func:`rlmcost.run.amounts.positive_amount`)."""
        from rlmcost.run.amounts import positive_amount

        return positive_amount(v, str(info.field_name))

    @field_validator("gpus", "dp")
    @classmethod
    def _at_most(cls, v: int | None, info: ValidationInfo) -> int | None:
        from rlmcost.specs.limits import MAX_GPUS, check_count

        if v is not None:
            check_count(f"{info.field_name}", v, MAX_GPUS, f"give fewer --{info.field_name}")
        return v

    @field_validator("prices")
    @classmethod
    def _prices(cls, v: dict[str, float]) -> dict[str, float]:
        from rlmcost.specs.prices import check_prices

        try:
            return check_prices(v)
        except SpecError as exc:
            raise ValueError(str(exc)) from None


class Run(Checked):
    """A query: algorithm, models by role, workload, deployment, cluster (module docstring).

    ``attention``: how teacher-forced attention FLOPs are counted (full, as PyTorch counts;
    causal, the unmasked half). ``tp_per_model``: each model's TP is the smallest power of two
    that leaves half the HBM free of weights (`rlmcost placements` without ``--tp``) instead of
    the deployment's trainer TP.
    """

    model_config = _STRICT

    algorithm: AlgorithmSpec = Field(default_factory=AlgorithmSpec)
    models: ModelsSpec = Field(default_factory=ModelsSpec)
    workload: WorkloadSpec = Field(default_factory=WorkloadSpec)
    deployment: Deployment = Field(default_factory=Deployment)
    cluster: ClusterSpec = Field(default_factory=ClusterSpec)
    attention: AttnCounting = AttnCounting.FULL
    tp_per_model: bool = False

    @model_validator(mode="after")
    def _context_split(self) -> "Run":
        """A context-parallel degree above the tokens of a sequence (S + T) leaves ranks with
        no token: each CP rank holds S+T / P_c of every sequence (Megatron-core's context
        parallelism), so the numbers would be silently wrong; an error instead."""
        from rlmcost.algorithms.options import DEFAULT_PROMPT_LEN, DEFAULT_RESPONSE_LEN

        w, cp = self.workload, self.deployment.train.cp
        tokens = (w.prompt_len or DEFAULT_PROMPT_LEN) + (w.response_len or DEFAULT_RESPONSE_LEN)
        if cp > tokens:
            raise ValueError(f"--cp {cp} splits each {tokens:,}-token sequence (S + T) over "
                             f"more ranks than it has tokens; give --cp {tokens} or less")
        from rlmcost.run.prompt_context import check_prompt_context

        check_prompt_context(self)  # a prompt that fills the engine's context: refused
        return self

    # -- derived --------------------------------------------------------------------------------

    def options(self) -> Options:
        """The algorithm's options, a global batch as mini-batches (``defaults.run_samples``);
        a teacher model named adds its forward where the algorithm has none (slime's OPD)."""
        from rlmcost.run.defaults import kv_scales_implied, run_samples

        return self.algorithm.options(run_samples(self), kv_scales_implied(self),
                                      self.models.teacher is not None)  # fmt: skip

    @property
    def grouped(self) -> bool:
        """Evaluated on several device groups: a Table IX placement or the user's groups."""
        d = self.deployment
        return d.placement not in (None, "baseline") or bool(d.groups)

    def replace(self, **sections: Any) -> "Run":
        """A copy with fields changed, nested by section (validated like a new Run)."""
        from rlmcost.run.replacing import replaced_data

        return Run.from_data(replaced_data(self.to_json(), sections))

    # -- files ----------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Plain values, defaults included (a group's own settings as given), for from_data."""
        return self.model_dump(mode="json")

    def to_yaml(self) -> str:
        """YAML text of :meth:`to_json` (``from_yaml`` reads it back to an equal Run)."""
        import yaml

        return yaml.safe_dump(self.to_json(), sort_keys=False)

    def dump(self, path: str | Path) -> None:
        """Write YAML (``.yaml``/``.yml``) or JSON (any other suffix)."""
        p = Path(path)
        text = self.to_yaml() if p.suffix in (".yaml", ".yml") else self.to_json_text()
        p.write_text(text)

    def to_json_text(self) -> str:
        """JSON text of :meth:`to_json`, indented, newline-terminated."""
        return json.dumps(self.to_json(), indent=2) + "\n"

    @classmethod
    def from_data(cls, data: dict[str, Any], where: str = "run",
                  flags: Mapping[str, str] | None = None) -> "Run":  # fmt: skip
        """A Run from a mapping; SpecError naming the first bad field (by the flag that set
        it, where ``flags`` maps its dotted path to one: the command line's Runs)."""
        from rlmcost.run.defaults import with_framework_defaults
        from rlmcost.specs.validation import build

        if not isinstance(data, Mapping):
            raise SpecError(f"{where}: a Run is a mapping of algorithm, models, workload, "
                            f"deployment, cluster; got {type(data).__name__}")  # fmt: skip
        return build(cls, with_framework_defaults(dict(data), where), where, flags)

    @classmethod
    def from_json(cls, text: str) -> "Run":
        """A Run from JSON text: its fields, or a command's ``--json`` output (its ``run``)."""
        return cls.from_data(_document(text, "run JSON"))

    @classmethod
    def from_yaml(cls, text: str) -> "Run":
        """A Run from YAML (or JSON) text; SpecError for text that is neither, or a bad field."""
        return cls.from_data(_document(text, "run YAML"))

    def to_command(self, command: str | None = None) -> str:
        """The CLI line that reproduces this Run (``command``: the view, the algorithm's
        command by default, ``"compare"`` or ``"placements"``; SpecError for another)."""
        from rlmcost.run.command import to_command

        return to_command(self, command)


def require_run(run: object, where: str) -> Run:
    """``run`` when it is a :class:`Run`; else a SpecError saying how to make one (a mapping
    goes through ``Run.from_data``, a file through ``rlmcost.load_run``)."""
    if not isinstance(run, Run):
        raise SpecError(f"{where} takes a rlmcost.Run, got {type(run).__name__}; build one "
                        "with rlmcost.Run.from_data({...}), Run.from_yaml(text) or "
                        "rlmcost.load_run(path)")  # fmt: skip
    return run


def _document(text: str, where: str) -> dict[str, Any]:
    from rlmcost.deployment.files import parse_document
    data = parse_document(text, where, "Run fields (or a query's --json output)")
    if "run" in data and isinstance(data["run"], dict):  # a command's --json output
        data = data["run"]
    return data


def load_run(path: str | Path) -> tuple[Run, dict[str, Any]]:
    """A Run from a YAML or JSON file, and, when the file is a command's ``--json`` output,
    the rest of that output (its ``command``, ``compared``, ...; else an empty mapping).
    SpecError for an unreadable or bad file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise SpecError(f"cannot read run file {p}: {exc.strerror}; check the path") from None
    except UnicodeDecodeError:
        raise SpecError(f"run file {p} is not UTF-8 text; give a YAML or JSON Run (or a "
                        "command's --json output)") from None
    from rlmcost.deployment.files import parse_document
    data = parse_document(text, str(p), "Run fields (or a query's --json output)")
    if isinstance(data.get("run"), dict):  # a command's --json output
        return Run.from_data(data["run"], f"run {p.name}"), data
    if "schema_version" in data:  # the output of a command that evaluates no Run
        raise SpecError(
            f"{p} is the output of `rlmcost {data.get('command', '?')}`, which holds no Run; "
            "give a Run file or the --json output of a query (an algorithm command, compare, "
            "placements, import)"
        )
    return Run.from_data(data, f"run {p.name}"), {}


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``top``'s fields over it, nested mappings merged field by field."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
