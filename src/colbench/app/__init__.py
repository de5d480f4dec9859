"""The use cases of colbench, one module per use case (run, compare, calibrate, history, claims, doctor, bisect,
explain, publish …), as asv keeps its `commands/`.

Each module takes a typed request (already parsed: no command-line strings), returns a typed outcome (data classes),
reports progress through an observer protocol of its own (no-op defaults), and raises the typed errors of
`colbench.app.errors` or of the layers below. Nothing here prints, parses argv or imports Typer or Rich: `cli/` turns
arguments into requests and outcomes into text, `report/` renders them.
"""
