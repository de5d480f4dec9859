from colbench.cli.main import cli

cli()
