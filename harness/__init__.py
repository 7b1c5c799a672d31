"""The harness: drive agents against generated tasks, record, evaluate, build consensus graphs, report."""
