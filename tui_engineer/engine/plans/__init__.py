"""The plan: its schema, asking the model for it, keeping it right while steps are reviewed, and
the graph of which step waits for which."""
