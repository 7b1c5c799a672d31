"""The meta-path engine: a graph-regex over typed nodes and edges, and the shipped patterns."""
