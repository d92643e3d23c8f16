"""The engine: plans a request into steps and works each through propose → test → fix → review.

Plain asyncio, no UI imports. It speaks through events (events/) and asks the human through a
Reviewer (reviews/review.py). Its parts, by what they do in the loop:
- plans/: the plan, asking for it, keeping it right, the graph of which step waits for which;
- steps/: a step's life: propose, apply, verify (baseline, reach, test-first, the commit hook,
  the project's declared checks), diagnose and fix;
- reviews/: what the human is asked and decides, each decision carried out to its commit;
- ahead/: later steps prepared side by side while the human reviews, one test queue for all;
- here: what the whole session shares: session.py, runtime.py (model calls, test runs), events,
  prompts, the chat inbox, waits and clean-up."""
