from rlmcost.cli import main

main()
