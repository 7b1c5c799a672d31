"""Task generation from knowledge graphs: templates, meta-paths, generators, filtering, coverage."""
