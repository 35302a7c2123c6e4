"""One module per ratio table of ``python -m bench.ratios``: ``add_arguments(parser)`` and ``run(args)``."""
