"""Speculative decoding in the generation engine: draft tokens the target model verifies.

Each engine step a draft proposes ``N`` tokens per sequence, one after another; the target
model then runs one forward over the ``N + 1`` positions (the last accepted token and the
drafts) and accepts the longest prefix its own sampling agrees with, plus one token of its own
(Leviathan et al. 2023, arXiv 2211.17192, Algorithm 1; Chen et al. 2023, arXiv 2302.01318;
vLLM docs "Speculative Decoding"). With each draft accepted with probability ``P`` given that
the ones before it were (independent acceptance, Leviathan et al. §3.1 eq. 1), a step emits

    1 + sum_{i=1..N} P^i   tokens per sequence (expected),

which :func:`expected_tokens_per_step` returns. The output distribution is the target
model's: an RL rollout stays on-policy (arXiv 2604.26779, "speculative decoding ... in
NeMo-RL with a vLLM backend": lossless, 1.8x rollout throughput at 8B).

Drafts (:class:`Speculation.draft`):

* ``mtp``: the checkpoint's own multi-token-prediction module (DeepSeek-V3 report, arXiv
  2412.19437 §2.2: one Transformer block, the projection M_k [d, 2d] of the concatenated
  normed hidden state and next-token embedding, embedding and output head shared with the main
  model; config ``num_nextn_predict_layers`` 1). vLLM runs it as ``method: deepseek_mtp``
  (vllm/model_executor/models/deepseek_mtp.py; with ``num_speculative_tokens`` above the MTP
  layers the same layer is run again), sharing the target's embedding and LM head (vLLM
  ``v1/spec_decode/eagle.py`` ``load_model``). One draft token costs that block's decode
  step, the [d, 2d] projection and the shared head's logits; :func:`mtp_arch` is the block
  as a one-layer model of the target's layer shape (its last layer's: MoE for DeepSeek-V3).
* a draft model (a built-in model name): its own full decode step per draft token, its own
  weights and KV cache in the engine.

Default acceptance of the MTP draft: :data:`MTP_ACCEPTANCE`. A draft model has no default
(it depends on the pair); the user gives it.

Not modelled: the variance of the accepted count (a sequence's steps are its length over the
expected tokens per step), tree drafts (EAGLE's), the rejection sampler's own kernels, and a
draft acceptance that changes over training.
"""

from __future__ import annotations

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

MTP_ACCEPTANCE = 0.85
"""Acceptance of the MTP module's draft token: DeepSeek-V3 technical report (arXiv 2412.19437)
§5.4.3 "Multi-Token Prediction Evaluation": "the acceptance rate of the second token
prediction ranges between 85% and 90% across various generation topics"; the lower end, for a
rollout of reasoning samples the MTP module was not trained on (the RL policy drifts from the
checkpoint the MTP layer was trained with, and Megatron does not train it here:
``mtp_num_layers 0`` in NeMo RL's DeepSeek-V3 recipes at v0.7.0; Li et al. 2026, arXiv
2606.12370, abstract: MTP acceptance rates "degrade significantly during RL training")."""

MTP = "mtp"
"""The draft kind that runs the checkpoint's own MTP module."""


def expected_tokens_per_step(tokens: int, acceptance: float) -> float:
    """Tokens one engine step emits per sequence with ``tokens`` drafts accepted each with
    probability ``acceptance`` (module docstring; Leviathan et al. 2023 eq. 1).

    >>> expected_tokens_per_step(1, 0.85)
    1.85
    >>> expected_tokens_per_step(0, 0.5)
    1.0
    """
    if tokens < 0 or not 0 <= acceptance <= 1:
        raise SpecError(f"speculative tokens {tokens} must be >= 0 and acceptance {acceptance} "
                        "in [0, 1]")  # fmt: skip
    return 1.0 + sum(acceptance**i for i in range(1, tokens + 1))


def mtp_arch(arch: Arch) -> Arch:
    """The MTP block of ``arch`` as a one-layer model of its last layer's shape (DeepSeek-V3
    §2.2: the MTP module's Transformer block is a main-model layer; MoE in DeepSeek-V3's
    checkpoint, layer 61). Embedding and head are the target's (shared), so the one-layer
    model's head cost is the draft's logits over the vocabulary. Nemotron-H (Mamba-2 layers):
    the MTP block is an attention block and an FFN block (config ``mtp_hybrid_override_pattern``
    "*E", Nemotron 3 Super; transformers 5.24 ``NemotronHConfig`` defaults
    ``mtp_layers_block_type`` to ['full_attention', 'moe']), so one attention layer with the
    model's FFN (its latent MoE too)."""
    if arch.linear_mamba and arch.sliding_window is None:
        return arch.with_(name=f"{arch.name} MTP", n_layers=1, first_dense_layers=0,
                          linear_layers=0, linear_key_heads=0, linear_value_heads=0,
                          linear_key_head_dim=0, linear_value_head_dim=0, linear_conv_kernel=0,
                          linear_mamba=False, linear_chunk=0, ffn_free_layers=0)  # fmt: skip
    if arch.linear_layers or arch.sliding_window is not None:
        raise SpecError(f"--speculative-draft mtp on {arch.name}: its layers mix attention "
                        "kinds, the MTP block's shape is not known; give a draft model name")
    return arch.with_(name=f"{arch.name} MTP", n_layers=1, first_dense_layers=0)


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding as the engine runs it: ``tokens`` drafts per step, each accepted
    with probability ``acceptance``, proposed by ``draft`` (the MTP block, :func:`mtp_arch`,
    when ``mtp``; else a draft model)."""

    tokens: int
    acceptance: float
    draft: Arch
    mtp: bool = True

    def __post_init__(self) -> None:
        if self.tokens < 1:
            raise SpecError(f"speculative tokens {self.tokens}: give at least 1")
        expected_tokens_per_step(self.tokens, self.acceptance)  # validates acceptance

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens per sequence per engine step (:func:`expected_tokens_per_step`)."""
        return expected_tokens_per_step(self.tokens, self.acceptance)

    @property
    def projection_flops_per_token(self) -> int:
        """FLOPs of the MTP projection M_k [d, 2d] for one draft token (0 for a draft model):
        2 x 2d x d (one add or one multiply = 1 FLOP)."""
        d = int(self.draft.d_model)
        return 4 * d * d if self.mtp else 0

    def step_parts(self, verify_s: float, attention: tuple[float, float],
                   draft: tuple[float, float]) -> tuple[float, float]:  # fmt: skip
        """(fixed, per context token) seconds of one speculative engine step over the tokens
        it emits per sequence (:attr:`tokens_per_step`): the target's verifying step on
        ``N + 1`` rows per sequence (``verify_s``: its fixed part; its attention does the
        FLOPs ``N + 1`` times per cached token and reads the KV once: ``attention`` is
        (compute, memory) seconds per context token of one row) and ``N`` draft steps
        (``draft``: their fixed and per-token parts, the MTP projection in the fixed one).

        >>> from rlmcost.specs import get_model
        >>> s = Speculation(tokens=1, acceptance=1.0, draft=get_model("gpt-2").arch())
        >>> s.step_parts(2.0, (0.1, 0.3), (1.0, 0.1))  # 2 tokens a step
        (1.5, 0.2)
        """
        n, g = self.tokens, self.tokens_per_step
        compute, memory = attention
        return ((verify_s + n * draft[0]) / g,
                (max(compute * (n + 1), memory) + n * draft[1]) / g)  # fmt: skip
