"""What the human is asked and what they decide: the Reviewer protocol, approval modes, a review's
rounds (hunks, hand edits, partial accepts), and each decision carried out to its commit."""
