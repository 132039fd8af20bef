"""Live tensor bytes per dispatched op on CPU PyTorch: a TorchDispatchMode that keeps a weak
reference to every storage an op returns and records the peak of their sum (the memory tests
of verl's log-prob head and update, tests/test_verl_update_memory.py and
tests/test_verl_first_micro_batch.py). Storages made before the mode is entered are not
counted."""

from __future__ import annotations

from typing import Any


def live_mode() -> Any:
    """A fresh mode (``with mode: ...``); ``mode.peak`` is the peak live bytes, which a caller
    may reset to 0 between the phases it measures."""
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef
    from torch.utils._python_dispatch import TorchDispatchMode

    class Live(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.refs: dict[int, tuple[Any, int]] = {}
            self.peak = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            out = func(*args, **(kwargs or {}))
            # freed storages first: a new one may reuse a freed one's address
            self.refs = {k: v for k, v in self.refs.items() if not v[0].expired()}
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor) and t.untyped_storage().nbytes():
                    s = t.untyped_storage()
                    self.refs.setdefault(s.data_ptr(), (StorageWeakRef(s), s.nbytes()))
            self.peak = max(self.peak, sum(b for _, b in self.refs.values()))
            return out

    return Live()
