"""A step's life: propose, apply, verify (the baseline, reach, test-first), diagnose and fix, until
it is ready for review."""
