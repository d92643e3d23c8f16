"""Work prepared ahead: later steps prepared side by side while the human reviews, on shadows
stacked on the proposal under review, sharing one test queue."""
