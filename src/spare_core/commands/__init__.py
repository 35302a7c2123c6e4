"""Sub-commands of the ``spare`` CLI (see :mod:`spare_core.cli`)."""
