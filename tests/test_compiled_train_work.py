"""The per-rank training work of rlmcost.compiled.train_step equals the symbolic
rlmcost.parallel.cost.training_cost (router counted), the work `rlmcost train` prints."""

from __future__ import annotations

import sympy as sp
from compiled_strategies import layouts, models
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rlmcost.choices import AttnCounting
from rlmcost.compiled.train_step import work_per_stage_rank
from rlmcost.errors import SpecError
from rlmcost.parallel.cost import Degrees, training_cost
from rlmcost.parallel.pipeline_split import uses_megatron_split
from rlmcost.parallel.validate import check_layout


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    data=st.data(),
    model=models,
    per_shard=st.integers(1, 6),
    seq=st.integers(1, 4096),
    counting=st.sampled_from(list(AttnCounting)),
)
def test_work_per_rank_and_global_equal_training_cost(data, model, per_shard, seq, counting):
    arch = model.arch()
    layout = data.draw(layouts(model))
    try:
        check_layout(arch, layout)
    except SpecError:
        assume(False)
    # the paper's 5D degrees (P_d, P_e) are the folded layout's (P_d P_e, P_e) (parallel.layout)
    assume(layout.dp % layout.ep == 0)
    assume(not uses_megatron_split(layout))  # the paper's Degrees split layers evenly
    batch = per_shard * layout.dp
    degrees = Degrees(dp=layout.dp // layout.ep, tp=layout.tp, pp=layout.pp, cp=layout.cp,
                      ep=layout.ep, ckpt=layout.ckpt)  # fmt: skip
    want = training_cost(arch, degrees, batch, seq, counting, omit_router=False)
    got = work_per_stage_rank(arch, layout, batch, seq, counting)
    replicas = layout.dp * layout.tp * layout.cp
    # Independent: the sympy rank costs of parallel.cost (Tables V-VIII's per-rank work).
    assert [sp.nsimplify(w) for w in got] == [r.work for r in want.ranks]
    assert sp.nsimplify(sum(got) * replicas) == want.work_global
