"""Profiles of the fuzz suite: ``fast`` (CI, default) and ``long``.

``SPARE_FUZZ_PROFILE=long python -m pytest tests/fuzz`` runs many more examples per
generator, not derandomized (each run explores new inputs; a failure prints the
``@reproduce_failure`` blob). The profiles apply through :data:`FUZZ`, the settings object
every fuzz test is decorated with (fuzz_profile.fuzz), so they never change the rest of the suite's profile.
"""
