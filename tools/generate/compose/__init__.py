"""Composition: chained long tasks (AgentSynth) and task graphs (OmniBench), complexity, consistency."""
