"""PPO, GRPO, DPO and their variants (seed paper §II-D, §II-D1), each as its invocations.

Every variant is written as its base plus or minus invocations (:func:`derive`), and its
docstring cites its paper and says what changes computationally. Token counts: B prompts (or
preference pairs / examples for the offline family), K responses per prompt, S prompt and T
response tokens; see ``model.NAMES`` for the knobs (epochs, mini-batches, oversampling, ...).

Stage assignment follows Table IV: rollouts in Generation; scoring by frozen or auxiliary
models (and the critic's value estimates) in Assessment; forward + backward of the trainable
models in Training. Sample-time log-probs come from generation (the inference engine returns
them with each sampled token); recomputing them with an extra actor forward, as verl and
OpenRLHF do, is the option ``recompute_logprobs`` (``options.configure``).
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Any

from rlmcost.algorithms.kinds import Kind, Role, Stage
from rlmcost.algorithms.model import Algorithm, Invocation, derive, with_changes
from rlmcost.errors import SpecError

GEN, ASSESS, TRAIN = Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING


def _forward(role: Role, sequences: str = "B*K", **kw: Any) -> Invocation:
    return Invocation(role, ASSESS, Kind.FORWARD, sequences, **kw)


def _train(role: Role, sequences: str = "B*K", **kw: Any) -> Invocation:
    return Invocation(role, TRAIN, Kind.TRAIN, sequences, **kw)


ROLLOUT = Invocation(Role.ACTOR, GEN, Kind.GENERATE, "B*K", note="sampled rollouts")


def ppo() -> Algorithm:
    """PPO (Schulman et al. 2017, arXiv:1707.06347) as RLHF runs it (Ouyang et al. 2022).

    Seed paper §II-D: all four models. Generation: the actor samples K responses for each
    of B prompts. Assessment: the reward model scores each sequence, the reference gives
    per-token log-probs for the KL penalty, the critic gives per-token values for GAE (one
    teacher-forced forward each over S + T tokens). Training: the actor and the critic each
    take E_ppo epochs of N_mini optimizer steps over the B K sequences.
    """
    return Algorithm(
        name="ppo",
        summary="PPO: actor, critic, reward model and reference (all four models)",
        citation="Schulman et al. 2017, arXiv:1707.06347; Ouyang et al. 2022",
        invocations=(
            ROLLOUT,
            _forward(Role.REWARD),
            _forward(Role.REFERENCE),
            _forward(Role.CRITIC),
            _train(Role.ACTOR, passes="E_ppo", steps="N_mini"),
            _train(Role.CRITIC, passes="E_ppo", steps="N_mini"),
        ),
        default_group=1,
    )


def grpo() -> Algorithm:
    """GRPO (Shao et al. 2024, DeepSeekMath, arXiv:2402.03300): PPO without the critic.

    The advantage of each of the K responses is its reward normalized within its group, so
    the critic's Assessment forward and its Training forward + backward disappear (seed paper
    §II-E: W_PPO - W_GRPO = Theta(B K (S+T) [C_f(V) + C_b(V)])); the reference stays for the
    KL term of the loss. K = 8 by default (DeepSeekMath samples 64; 8 is a common setting).
    """
    base = ppo()
    return derive(
        base,
        "grpo",
        "GRPO: PPO without the critic; group-normalized rewards over K samples",
        "Shao et al. 2024, arXiv:2402.03300",
        remove=[base.find(Role.CRITIC, ASSESS), base.find(Role.CRITIC, TRAIN)],
        default_group=8,
        min_group=2,  # the group's reward mean and std need two samples or more
    )


def dpo() -> Algorithm:
    """DPO (Rafailov et al. 2023, arXiv:2305.18290): offline preference optimization.

    Table IV †: no Generation in the loop; the B preference pairs (a chosen and a rejected
    response to one prompt, S + T tokens each) come from a fixed dataset. Assessment: the
    reference scores both responses of each pair (2B sequences); Training: the actor takes one
    optimizer step over the same 2B sequences. The reference never needs activations.
    """
    return Algorithm(
        name="dpo",
        summary="DPO: offline; reference and actor over B chosen/rejected pairs",
        citation="Rafailov et al. 2023, arXiv:2305.18290",
        invocations=(
            _forward(Role.REFERENCE, "2*B", note="chosen and rejected"),
            _train(Role.ACTOR, "2*B", note="chosen and rejected"),
        ),
        offline=True,
    )


def rloo() -> Algorithm:
    """RLOO (Ahmadian et al. 2024, arXiv:2402.14740): REINFORCE with a leave-one-out baseline.

    Each response's baseline is the mean reward of the other K - 1 responses to its prompt:
    O(B K) scalar arithmetic, no model. The invocations are exactly GRPO's (the seed paper
    §II-D1 groups RLOO with the critic-free methods). K = 4 by default (the paper uses 2-4).
    """
    return derive(
        grpo(),
        "rloo",
        "RLOO: GRPO's invocations; leave-one-out baseline over K samples",
        "Ahmadian et al. 2024, arXiv:2402.14740",
        default_group=4,
    )


def remax() -> Algorithm:
    """ReMax (Li et al. 2023, arXiv:2310.10505): REINFORCE with a greedy-rollout baseline.

    Adds one greedy rollout per prompt (B more sequences in Generation) and its reward-model
    score (B more sequences in Assessment); no critic. One sampled response per prompt (K = 1).
    """
    base = grpo()
    return derive(
        base,
        "remax",
        "ReMax: no critic; an extra greedy rollout per prompt as the baseline",
        "Li et al. 2023, arXiv:2310.10505",
        add=[
            Invocation(Role.ACTOR, GEN, Kind.GENERATE, "B", note="greedy baseline rollout"),
            _forward(Role.REWARD, "B", note="scores the greedy rollout"),
        ],
        default_group=1,
        min_group=1,  # the baseline is the greedy rollout, not the group
    )


def dapo() -> Algorithm:
    """DAPO (Yu et al. 2025, arXiv:2503.14476): GRPO with dynamic sampling, no KL, verifier.

    Dynamic sampling drops groups whose K responses are all right or all wrong and samples
    more until B full groups remain; overlong filtering masks truncated responses. Both show
    up as an oversampling factor rho = generated / kept: rho B K rollouts are generated and
    checked, B K train. Rewards come from a rule-based verifier (no reward model); DAPO
    removes the KL term (no reference). rho = 3 by default, as verl's DAPO recipe generates
    3 x the training prompts per sampling round (gen_prompt_bsz = 3 x train_prompt_bsz);
    K = 16 as in the paper.
    """
    base = grpo()
    return derive(
        base,
        "dapo",
        "DAPO: GRPO + dynamic sampling (rho x rollouts), verifier reward, no reference",
        "Yu et al. 2025, arXiv:2503.14476",
        remove=[base.find(Role.REWARD), base.find(Role.REFERENCE)],
        replace_={ROLLOUT: with_changes(ROLLOUT, sequences="rho*B*K", note="oversampled")},
        add=[Invocation(Role.VERIFIER, ASSESS, Kind.VERIFY, "rho*B*K")],
        default_group=16,
    )


def vapo() -> Algorithm:
    """VAPO (Yue et al. 2025, arXiv:2504.05118): value-model PPO for long chain-of-thought.

    Keeps the critic (value pretraining happens once, before the loop; decoupled and
    length-adaptive GAE are O(B K T) scalar work), so its profile stays actor-critic (seed
    paper §II-D1). Rewards come from a rule-based verifier on verifiable tasks, so the reward
    model goes; like DAPO it samples K = 16 responses per prompt. The reference forward is
    kept; drop it with ``kl=False`` when the KL coefficient is 0.
    """
    base = ppo()
    return derive(
        base,
        "vapo",
        "VAPO: PPO with the critic kept, verifier reward instead of a reward model",
        "Yue et al. 2025, arXiv:2504.05118",
        remove=[base.find(Role.REWARD)],
        add=[Invocation(Role.VERIFIER, ASSESS, Kind.VERIFY, "B*K")],
        default_group=16,
    )


def safe_rlhf() -> Algorithm:
    """Safe-RLHF (Dai et al. 2023, arXiv:2310.12773): PPO-Lagrangian with a cost model.

    Adds a frozen cost model C_phi (a second scorer, Assessment forward) and a trainable cost
    critic V_c (Assessment forward for the cost advantages, Training forward + backward),
    next to PPO's reward model and critic (seed paper §II-D1).
    """
    return derive(
        ppo(),
        "safe-rlhf",
        "Safe-RLHF: PPO + a cost model and a cost critic (Lagrangian constraint)",
        "Dai et al. 2023, arXiv:2310.12773",
        add=[
            _forward(Role.COST),
            _forward(Role.COST_CRITIC),
            _train(Role.COST_CRITIC, passes="E_ppo", steps="N_mini"),
        ],
    )


def prm() -> Algorithm:
    """GRPO with a process reward model (Lightman et al. 2023, arXiv:2305.20050; Wang et al.
    2024, Math-Shepherd, arXiv:2312.08935; DeepSeekMath §4.1.3 process supervision).

    The PRM scores each of N_step reasoning steps. Written as the costly form the seed paper
    §II-C1 warns of: one teacher-forced pass per step prefix (S + j T / N_step tokens,
    j = 1..N_step), which replaces the reward model's single pass; N_step = 1 is the outcome
    reward model again. A PRM that reads all step scores from one pass costs what the reward
    model costs (use grpo with the PRM as --reward). N_step = 8 by default (an assumption).
    """
    base = grpo()
    reward = base.find(Role.REWARD)
    return derive(
        base,
        "prm",
        "GRPO + process reward model: one scoring pass per reasoning step",
        "Lightman et al. 2023, arXiv:2305.20050; Wang et al. 2024, arXiv:2312.08935",
        replace_={reward: _forward(Role.PRM, prefixes="N_step", note="per-step prefixes")},
    )


def rlvr() -> Algorithm:
    """RLVR (Lambert et al. 2024, Tulu 3, arXiv:2411.15124): GRPO with verifiable rewards.

    A program checks each response (exact answer match, unit tests): the reward model's
    forward is replaced by a CPU verifier, whose cost is not modelled (0 GPU FLOPs). The
    reference stays for the KL term.
    """
    base = grpo()
    return derive(
        base,
        "rlvr",
        "RLVR: GRPO with a programmatic verifier instead of a reward model",
        "Lambert et al. 2024, arXiv:2411.15124",
        replace_={base.find(Role.REWARD): Invocation(Role.VERIFIER, ASSESS, Kind.VERIFY, "B*K")},
    )


def d_rlaif() -> Algorithm:
    """LLM-as-judge / d-RLAIF (Lee et al. 2023, arXiv:2309.00267), on GRPO.

    An off-the-shelf LLM judge replaces the reward model: it reads the prompt and response
    (prefill of S + T tokens) and generates T_j tokens of verdict, so Assessment gains a
    T_j-step autoregressive chain. d-RLAIF reads a score from the next-token distribution
    (T_j = 1); a judge that reasons first generates more (T_j = 256 by default).
    """
    base = grpo()
    judge = Invocation(Role.JUDGE, ASSESS, Kind.GENERATE, "B*K", prompt="S + T", response="T_j")
    return derive(
        base,
        "d-rlaif",
        "LLM-as-judge (d-RLAIF): GRPO with a generating judge instead of a reward model",
        "Lee et al. 2023, arXiv:2309.00267",
        replace_={base.find(Role.REWARD): judge},
    )


def opd() -> Algorithm:
    """On-policy distillation (Agarwal et al. 2024, GKD, arXiv:2306.13649; Gu et al. 2024,
    MiniLLM, arXiv:2306.08543): the student samples, a frozen teacher scores its tokens.

    The student (the actor) samples K responses to each of B prompts, the teacher
    (``--teacher``) runs one forward over each (S + T tokens) for its log-probs, the student
    trains on a divergence to them; no reward, no reference (NeMo RL distillation.py). K = 1."""
    base = grpo()
    return derive(
        base,
        "opd",
        "On-policy distillation: the student samples, a teacher model scores each token",
        "Agarwal et al. 2024, arXiv:2306.13649; Gu et al. 2024, arXiv:2306.08543",
        remove=[base.find(Role.REWARD)],
        replace_={base.find(Role.REFERENCE): _forward(Role.TEACHER, note="teacher log-probs")},
        default_group=1,
        min_group=1,  # no group baseline: the teacher scores each sample
    )


def ipo() -> Algorithm:
    """IPO (Azar et al. 2023, arXiv:2310.12036): DPO's invocations with a squared loss.

    Changes the pairwise objective, not the computation (seed paper §II-D1).
    """
    return derive(
        dpo(),
        "ipo",
        "IPO: DPO's invocations; squared-loss objective",
        "Azar et al. 2023, arXiv:2310.12036",
    )


def orpo() -> Algorithm:
    """ORPO (Hong et al. 2024, arXiv:2403.07691): SFT + odds-ratio penalty, no reference.

    The odds ratio uses the actor's own log-probs of the chosen and rejected responses, so
    the reference forward goes (seed paper §II-D1).
    """
    base = dpo()
    return derive(
        base,
        "orpo",
        "ORPO: no reference model; SFT loss + odds-ratio penalty",
        "Hong et al. 2024, arXiv:2403.07691",
        remove=[base.find(Role.REFERENCE)],
    )


def simpo() -> Algorithm:
    """SimPO (Meng et al. 2024, arXiv:2405.14734): length-normalized reward, no reference.

    The implicit reward is the actor's average log-prob, so the reference forward goes,
    saving its memory and forward work (seed paper §II-D1).
    """
    base = dpo()
    return derive(
        base,
        "simpo",
        "SimPO: no reference model; length-normalized implicit reward",
        "Meng et al. 2024, arXiv:2405.14734",
        remove=[base.find(Role.REFERENCE)],
    )


def kto() -> Algorithm:
    """KTO (Ethayarajh et al. 2024, arXiv:2402.01306): unpaired desirable/undesirable data.

    B examples, each one response labelled good or bad (not 2B paired sequences). The KL
    reference point z_0 is estimated on B mismatched prompt/response pairs: the reference
    scores them in Assessment and the actor, without gradients, in Training (as TRL's
    KTOTrainer does).
    """
    base = dpo()
    return derive(
        base,
        "kto",
        "KTO: unpaired examples; reference and no-grad actor passes for the KL estimate",
        "Ethayarajh et al. 2024, arXiv:2402.01306",
        replace_={
            base.find(Role.REFERENCE): _forward(Role.REFERENCE, "B", note="labelled examples"),
            base.find(Role.ACTOR): _train(Role.ACTOR, "B", note="labelled examples"),
        },
        add=[
            _forward(Role.REFERENCE, "B", note="mismatched pairs, KL estimate"),
            Invocation(
                Role.ACTOR, TRAIN, Kind.FORWARD, "B", note="mismatched pairs, KL estimate, no grad"
            ),
        ],
    )


_BUILDERS = (
    ppo,
    grpo,
    dpo,
    rloo,
    remax,
    dapo,
    vapo,
    safe_rlhf,
    prm,
    rlvr,
    d_rlaif,
    opd,
    ipo,
    orpo,
    simpo,
    kto,
)


@cache
def algorithms() -> dict[str, Algorithm]:
    """Every built-in algorithm by name, bases first (ppo, grpo, dpo), then the variants."""
    return {alg.name: alg for alg in (build() for build in _BUILDERS)}


def builder(name: str):  # noqa: ANN201 - the catalog function (for its docstring)
    """The function that defines algorithm ``name`` (its docstring cites the paper)."""
    return {b().name: b for b in _BUILDERS}[get_algorithm(name).name]


def get_algorithm(name: str | Algorithm) -> Algorithm:
    """An algorithm by name (case and ``_``/``-`` insensitive); SpecError with suggestions."""
    if isinstance(name, Algorithm):
        return name
    table = algorithms()
    key = name.strip().lower().replace("_", "-")
    if key in table:
        return table[key]
    parts = [p for p in key.replace(",", " ").split() if p]
    if len(parts) > 1 and all(p in table for p in parts):  # a list where one name goes
        raise SpecError(f"'{name}' names {len(parts)} algorithms: `rlmcost compare` takes them "
                        f"space-separated ({' '.join(parts)}), other commands one")  # fmt: skip
    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise SpecError(f"unknown algorithm '{name}'; {hint}see `rlmcost algorithms`")
