"""DeepSeek Sparse Attention (DSA): the lightning indexer and the top-k keys a query attends to.

DeepSeek-V3.2 (arXiv:2512.02556 §2.1, "DeepSeek Sparse Attention"), GLM-5 / GLM-5.1 / GLM-5.2;
the layer structure of transformers 5.24 ``DeepseekV32Indexer`` / ``DeepseekV32Attention``
(models/deepseek_v32/modular_deepseek_v32.py) and ``GlmMoeDsaAttention``
(models/glm_moe_dsa/modular_glm_moe_dsa.py). ``Arch.index_topk`` = k, ``index_heads`` = H_I,
``index_head_dim`` = d_I; the model is MLA with a query latent d_cq (``q_lora_rank``).

* The indexer of one layer: ``wq_b`` d_cq -> H_I d_I (on the MLA query latent), ``wk``
  d -> d_I (one key head), a LayerNorm on the key (weight and bias, d_I each), ``weights_proj``
  d -> H_I (per-head weights). Its score of key s for query t is sum_j w_tj ReLU(q_tj . k_s):
  2 H_I d_I FLOPs for the dot products and 2 H_I for the weighted sum per query-key pair. A
  layer whose ``indexer_types`` entry is ``shared`` (GLM-5.2) has no indexer and reuses the
  previous top-k: ``Arch.index_layers`` counts the others.
* The indexer scores every earlier key of each query (causal: query i meets i keys; a decode
  step at context c meets c): DeepGEMM's ``fp8_mqa_logits`` (prefill, training) and
  ``fp8_paged_mqa_logits`` (decode) compute per query the range [start, end) of its keys
  (slime_plugins/models/glm5/ops/indexer.py @624b824a calls the first with per-query
  ``starts``/``ends``). ``full`` counting takes the S x S logits matrix that transformers' eager
  path (and FlopCounterMode) computes; ``causal`` the S (S + 1) / 2 pairs.
* The indexer runs under ``torch.no_grad`` in transformers, and slime's GLM-5 training
  discards its scores (``_, topk_indices = fused_select_topk(...)``, glm5.py @624b824a): no
  gradient reaches it, so a training step runs it forward only (its backward is 0; Megatron-
  core's DSA with an indexer KL loss, ``dsa_indexer_loss_coeff``, would add one: not counted).
* The top-k (a sort over each query's scores) and the gather are not matrix products and are
  left out, as the router's top-k is (the package's FLOP convention).
* Main attention: each query attends to min(position, k) keys (transformers' ``topk(min(k,
  T))``), in the absorbed form the production sparse kernels run: FlashMLA's sparse prefill and
  decode (``flash_mla_sparse_fwd``, ``flash_mla_with_kvcache(indices=...)``: an MQA over the
  576-wide latent key [c_kv, k_rope] and the 512-wide latent value, the query mapped through
  W_UK and the output through W_UV) and slime's ``SparseMLA`` in training (glm5.py @624b824a:
  ``query_absorbed [.., h, 576], kv [.., 1, 576]``, then ``einsum("thm,hdm->thd", out, wv)``):
  2 h (2 d_c + d_rope) FLOPs per pair (``attention_flops_per_key_absorbed``), the absorbed
  projections the same weights per token as kv_b_proj. ``full`` counting takes S min(S, k)
  pairs per layer (every query's index list of min(S, k) entries, the masked ones too, as
  transformers' ``topk`` returns them and the kernels take fixed-width index lists), ``causal``
  sum_i min(i, k). transformers' eager / SDPA path instead attends densely over all S keys in
  the expanded form and masks the unselected ones (what FlopCounterMode sees): tests/
  test_dsa.py counts both.
"""

from __future__ import annotations

import sympy as sp

from rlmcost.arch import Arch
from rlmcost.blocks.attention import Expr
from rlmcost.choices import AttnCounting


def _topk(arch: Arch) -> Expr:
    if arch.index_topk is None:
        raise ValueError(f"{arch.name} has no DeepSeek Sparse Attention (index_topk is None)")
    return arch.index_topk


def indexer_weights_per_token(arch: Arch) -> sp.Expr:
    """Weight elements one token multiplies in one indexer: wq_b d_cq x H_I d_I, wk d x d_I,
    weights_proj d x H_I (transformers ``DeepseekV32Indexer``)."""
    q_latent = 0 if arch.q_lora_rank is None else arch.q_lora_rank
    return sp.sympify(
        q_latent * arch.index_heads * arch.index_head_dim
        + arch.d_model * (arch.index_head_dim + arch.index_heads)
    )


def params_indexer(arch: Arch) -> sp.Expr:
    """Parameters of one indexer: its projections and the key's LayerNorm (weight and bias)."""
    return sp.sympify(indexer_weights_per_token(arch) + 2 * arch.index_head_dim)


def indexer_flops_per_key(arch: Arch) -> sp.Expr:
    """FLOPs of one query scoring one key in one indexer: 2 H_I d_I + 2 H_I."""
    return sp.sympify(2 * arch.index_heads * (arch.index_head_dim + 1))


def prefix_topk_sum(n: Expr, k: Expr) -> sp.Expr:
    """sum_{i=1}^{n} min(i, k) = a (a + 1) / 2 + (n - a) k with a = min(n, k), exactly."""
    a = sp.Min(n, k)
    return a * (a + 1) / 2 + (n - a) * k


def sparse_keys(arch: Arch, context: Expr) -> sp.Expr:
    """Keys one query at ``context`` attends to, summed over the layers: L min(c, k)."""
    return sp.sympify(arch.n_layers * sp.Min(context, _topk(arch)))


def sparse_keys_sum(arch: Arch, prompt: Expr, response: Expr) -> sp.Expr:
    """sum_{c=S+1}^{S+T} L min(c, k): the attended keys of a rollout's T decode steps."""
    k = _topk(arch)
    return sp.sympify(arch.n_layers * (prefix_topk_sum(prompt + response, k)
                                       - prefix_topk_sum(prompt, k)))  # fmt: skip


def sparse_pairs(arch: Arch, seq: Expr, counting: AttnCounting) -> sp.Expr:
    """Query-key pairs of one teacher-forced sequence, summed over layers: S min(S, k) per
    layer (``full``) or sum_{i=1}^{S} min(i, k) (``causal``)."""
    k = _topk(arch)
    if counting is AttnCounting.FULL:
        return sp.sympify(arch.n_layers * seq * sp.Min(seq, k))
    return sp.sympify(arch.n_layers * prefix_topk_sum(seq, k))


def indexer_work_per_token(arch: Arch, context: Expr) -> sp.Expr:
    """Forward FLOPs of the indexers for one query at ``context``: their projections and the
    scores of ``context`` keys, over the layers that run one (0 without DSA)."""
    if not arch.is_dsa:
        return sp.Integer(0)
    per_layer = 2 * indexer_weights_per_token(arch) + indexer_flops_per_key(arch) * context
    return sp.expand(arch.n_index_layers * per_layer)


def indexer_work_rollout_decode(arch: Arch, prompt: Expr, response: Expr) -> sp.Expr:
    """The indexers' FLOPs over a rollout's T decode steps at contexts S + 1 .. S + T."""
    if not arch.is_dsa:
        return sp.Integer(0)
    keys = response * prompt + sp.sympify(response) * (response + 1) / 2
    per_layer = 2 * indexer_weights_per_token(arch) * response + indexer_flops_per_key(arch) * keys
    return sp.expand(arch.n_index_layers * per_layer)


def indexer_work_forward(arch: Arch, seqs: Expr, seq: Expr, counting: AttnCounting) -> sp.Expr:
    """The indexers' forward FLOPs over ``seqs`` teacher-forced sequences of ``seq`` tokens:
    the projections of every token and the S^2 (``full``) or S (S + 1) / 2 scores."""
    if not arch.is_dsa:
        return sp.Integer(0)
    seq = sp.sympify(seq)
    pairs = seq**2 if AttnCounting(counting) is AttnCounting.FULL else seq * (seq + 1) / 2
    per_layer = 2 * indexer_weights_per_token(arch) * seq + indexer_flops_per_key(arch) * pairs
    return sp.expand(seqs * arch.n_index_layers * per_layer)
