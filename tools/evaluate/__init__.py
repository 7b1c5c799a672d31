"""Evaluation: answer metrics, judges, success checks, the graph evaluator (CR/LC), consensus graphs and reports."""
