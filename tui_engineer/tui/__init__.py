"""The Textual front end: the app, its screens and panes. Only this package may import textual."""
