"""The engine: plans a request into steps and works each through propose → test → fix → review.

Plain asyncio, no UI imports. It speaks through events (events.py) and asks the human through a
Reviewer (review.py)."""
