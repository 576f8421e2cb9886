from ccls.cli import entry_point

entry_point()
