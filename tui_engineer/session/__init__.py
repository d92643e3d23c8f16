"""The session core every front end starts: its options, prepare, run, and stop signals."""
