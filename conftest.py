"""What every member's tests share: the Hypothesis settings profile.

pytest reads this file for every test under the repository (the rootdir is
here), so each workspace member's ``@given`` tests, and any future member's,
run with the same profile, chosen by ``HYPOTHESIS_PROFILE``:

- ``ci`` (the default, what ``make test`` runs): no wall-clock deadline and
  no too-slow health check, so a busy machine can't fail a property test;
  the number of examples is Hypothesis's own. (It replaces Hypothesis's
  built-in ``ci`` profile, which would also fix the examples and drop the
  example database.)
- ``dev``: Hypothesis's defaults (a 200 ms deadline per example), to find an
  example that has become slow.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    settings.get_profile("default"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", settings.get_profile("default"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
