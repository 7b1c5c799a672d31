"""Web tasks: generated from paths through the web graph and verified by replay."""
