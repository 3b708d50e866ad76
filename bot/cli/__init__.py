"""The command line's subcommands (argparse is in bot/__main__.py)."""
