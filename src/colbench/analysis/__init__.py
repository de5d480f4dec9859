"""Statistics over benchmark results: summaries, A/B verdicts, change points, A/A calibration.

Everything here is pure (numbers in, dataclasses out) so the runner, the store and the CLI can wire it
without the analysis knowing where the samples came from.
"""
