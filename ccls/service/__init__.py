"""The analysis engine both views (the language server, the command line) call."""
