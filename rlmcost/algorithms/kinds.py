"""Roles, stages and kinds of a model invocation, as string enums (values = CLI spellings).

This module imports nothing heavy so the CLI can build its options from it at start-up.
"""

from __future__ import annotations

from enum import StrEnum

from rlmcost.choices import Head


class Stage(StrEnum):
    """The three stages of one RL iteration (seed paper §II-B, Table IV), in order."""

    GENERATION = "generation"  # the actor samples responses (prefill + decode)
    ASSESSMENT = "assessment"  # frozen or auxiliary models score the responses
    TRAINING = "training"  # trainable models take forward + backward + optimizer steps

    @property
    def label(self) -> str:
        return self.value.capitalize()


class Kind(StrEnum):
    """What an invocation does with its model."""

    GENERATE = "generate"  # autoregressive: prefill of the prompt, one decode step per token
    FORWARD = "forward"  # teacher-forced forward pass, no gradients (M_Inf, never M_Act)
    TRAIN = "train"  # forward + backward + optimizer step (Adam states, M_Act)
    VERIFY = "verify"  # a program (answer checker, unit tests) on the CPU: no model cost


class Role(StrEnum):
    """The models of an RL pipeline (seed paper §II-C, Table II) and a program verifier."""

    ACTOR = "actor"  # pi_theta, the policy being trained
    CRITIC = "critic"  # V_psi, value model (trainable, d x 1 head)
    REWARD = "reward"  # R_phi, outcome reward model (frozen, d x 1 head)
    REFERENCE = "reference"  # pi_ref, frozen snapshot of the SFT policy (LM head)
    COST = "cost"  # Safe-RLHF cost model C_phi (frozen, d x 1 head)
    COST_CRITIC = "cost-critic"  # Safe-RLHF cost value model V_c (trainable, d x 1 head)
    PRM = "prm"  # process reward model R_phi^proc (frozen, d x 1 head, per-step scores)
    JUDGE = "judge"  # an off-the-shelf LLM prompted to score (frozen, LM head, generates)
    TEACHER = "teacher"  # on-policy distillation's teacher (frozen, LM head, scores tokens)
    VERIFIER = "verifier"  # a programmatic checker (RLVR): not a neural model

    @property
    def head(self) -> Head:
        """Output head: d x V for the policy-like models, d x 1 for scalar scorers."""
        lm = (Role.ACTOR, Role.REFERENCE, Role.JUDGE, Role.TEACHER)
        return Head.LM if self in lm else Head.VALUE

    @property
    def symbol(self) -> str:
        """The paper's name for the model (Table II), for labels."""
        return {
            Role.ACTOR: "pi_theta",
            Role.CRITIC: "V_psi",
            Role.REWARD: "R_phi",
            Role.REFERENCE: "pi_ref",
            Role.COST: "C_phi",
            Role.COST_CRITIC: "V_c",
            Role.PRM: "R_proc",
            Role.JUDGE: "J",
            Role.TEACHER: "pi_T",
            Role.VERIFIER: "verifier",
        }[self]

    @property
    def latex(self) -> str:
        """The paper's name in LaTeX."""
        return {
            Role.ACTOR: r"\pi_\theta",
            Role.CRITIC: r"V_\psi",
            Role.REWARD: r"R_\phi",
            Role.REFERENCE: r"\pi_{\mathrm{ref}}",
            Role.COST: r"C_\phi",
            Role.COST_CRITIC: r"V_c",
            Role.PRM: r"R^{\mathrm{proc}}_\phi",
            Role.JUDGE: r"J",
            Role.TEACHER: r"\pi_T",
            Role.VERIFIER: r"\mathrm{verifier}",
        }[self]

    @property
    def fallback(self) -> Role | None:
        """Whose model this role uses when none is given: a cost critic is sized like the
        critic, a cost model or PRM like the reward model, everything else like the actor."""
        return {
            Role.ACTOR: None,
            Role.COST_CRITIC: Role.CRITIC,
            Role.COST: Role.REWARD,
            Role.PRM: Role.REWARD,
        }.get(self, Role.ACTOR)

    @property
    def chain(self) -> tuple[Role, ...]:
        """This role, then the roles whose model it falls back to, ending at the actor."""
        out = [self]
        while out[-1].fallback is not None:
            out.append(out[-1].fallback)
        return tuple(out)


MODEL_KEYS: dict[Role, str] = {Role.CRITIC: "critic", Role.REWARD: "reward",
                               Role.REFERENCE: "ref", Role.JUDGE: "judge",
                               Role.TEACHER: "teacher"}  # fmt: skip
"""The roles beside the actor a query names a model for, and the name it uses: the keyword
(``rlmcost.estimate(..., ref=...)``) and, with ``--``, the flag (``--ref``). The one table the
CLI, the API, the Run's command and the resolver's errors read."""
