"""The ACP front end: `tui-engineer acp` speaks the Agent Client Protocol on stdin/stdout, so an
editor (Zed, Neovim, JetBrains, toad...) drives a session. Built on the official SDK
(`agent-client-protocol`); never imports Textual."""
