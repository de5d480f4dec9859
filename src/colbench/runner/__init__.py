"""Plan, schedule, isolate: how cases become worker processes and results."""
