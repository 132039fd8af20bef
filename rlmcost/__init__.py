"""rlmcost: analytical work / depth / memory cost model of RL post-training of LLMs.

Layers (data flows up): ``symbols`` -> ``arch`` -> ``blocks`` (Table III) -> ``algorithms``,
``parallel``, ``placement`` -> ``evaluate`` -> ``reports`` -> ``cli``. ``specs`` holds
models, hardware and workloads; ``calibrate`` the optional PyTorch harness.
Importing the package is cheap: heavy modules load on first use.
"""

__version__ = "0.1.0"
