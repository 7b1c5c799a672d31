"""What keeps Taskloom safe: allowed roots for paths, origin fences for URLs, the HTTP guard, the agent sandbox."""
