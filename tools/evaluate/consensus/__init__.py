"""Consensus graphs (WebGraphEval): canonicalise, merge, analyse, import."""
