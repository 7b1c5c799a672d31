"""``taskloom build``: a manifest of documents and sites turned into a publishable, versioned dataset folder."""
