"""``python -m rlmcost.compiled.generate``: write (or ``--check``) ``blocks_gen/``."""

from rlmcost.compiled.generate import main

raise SystemExit(main())
