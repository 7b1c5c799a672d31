"""Document tasks: templates, generators over document graphs, LLM-authored drafts."""
