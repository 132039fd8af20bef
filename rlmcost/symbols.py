"""The paper's notation, defined once (seed paper Tables I and III, §III-G).

Every symbol is a positive integer unless its comment says otherwise; every other module
imports its symbols from here so that printed expressions read like the paper's tables.
Units: ``tokens``, ``elements`` (one tensor entry of the common element size), ``ranks``.
"""

from __future__ import annotations

import sympy as sp


def _pos_int(name: str) -> sp.Symbol:
    return sp.Symbol(name, integer=True, positive=True)


# --- workload -------------------------------------------------------------------------------
B = _pos_int("B")  # prompts per RL iteration (or preference pairs for DPO) [sequences]
K = _pos_int("K")  # responses sampled per prompt (group size in GRPO) [sequences]
S = _pos_int("S")  # prompt length [tokens]
T = _pos_int("T")  # response length [tokens]
m = _pos_int("m")  # context length of a teacher-forced pass, m = S + T in the tables [tokens]
c = _pos_int("c")  # KV-cache context of one decode step, new token included [tokens]
n = _pos_int("n")  # tokens processed in one invocation (batch x sequence) [tokens]

# --- architecture ---------------------------------------------------------------------------
L = _pos_int("L")  # Transformer layers
d = _pos_int("d")  # hidden (model) width [elements]
d_ff = _pos_int("d_ff")  # FFN inner width [elements]
h = _pos_int("h")  # attention (query) heads
h_kv = _pos_int("h_kv")  # key/value heads (= h for MHA, 1 for MQA, between for GQA)
d_h = _pos_int("d_h")  # head dimension [elements]; canonical d_h = d / h
V = _pos_int("V")  # vocabulary size [tokens]
E = _pos_int("E")  # routed experts per MoE layer
k = _pos_int("k")  # experts selected per token (top-k)
E_s = sp.Symbol("E_s", integer=True, nonnegative=True)  # shared experts per MoE layer
d_e = _pos_int("d_e")  # routed-expert FFN inner width [elements]

# --- parallel degrees (1 = strategy off) ----------------------------------------------------
N = _pos_int("N")  # devices taking part in one invocation [ranks]
P_d = _pos_int("P_d")  # data-parallel degree [ranks]
P_t = _pos_int("P_t")  # tensor-parallel degree [ranks]
P_p = _pos_int("P_p")  # pipeline-parallel degree (stages) [ranks]
P_c = _pos_int("P_c")  # context-parallel degree [ranks]
P_e = _pos_int("P_e")  # expert-parallel degree [ranks]
P_z = _pos_int("P_z")  # ZeRO / FSDP sharding degree [ranks]
n_mb = _pos_int("n_mb")  # micro-batches per pipeline flush
v_pp = _pos_int("v")  # virtual pipeline stages per rank (interleaved 1F1B)

# --- memory and training --------------------------------------------------------------------
kappa_ckpt = sp.Symbol("kappa_ckpt", positive=True)  # kept fraction of activations, 0 < k <= 1
epochs = _pos_int("E_ppo")  # passes over each rollout batch in Training (PPO epochs)

# --- algorithm knobs (§II-D1 variants) --------------------------------------------------------
N_mini = _pos_int("N_mini")  # mini-batches per epoch: sequential optimizer steps
rho = sp.Symbol("rho", positive=True, rational=True)  # generated / kept sequences (DAPO), >= 1
N_step = _pos_int("N_step")  # reasoning steps a process reward model scores, one pass each
T_j = _pos_int("T_j")  # tokens an LLM judge generates per verdict [tokens]

WORKLOAD = (B, K, S, T)
PARALLEL = (N, P_d, P_t, P_p, P_c, P_e, P_z, n_mb, v_pp)
