from colbench.cli.main import main

main()
