"""One module per subcommand; each exposes ``run_<name>(...)`` called by :mod:`traceinspect.cli`."""
