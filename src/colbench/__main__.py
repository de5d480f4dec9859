from colbench.cli.main import app

app()
