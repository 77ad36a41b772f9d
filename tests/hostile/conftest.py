"""The hostile tests' shared builds, registered once for the folder: a session fixture imported into several
test modules is a fixture of each module, built once per module; here it is built once per session (per
worker under pytest-xdist)."""

from tests.hostile.binding_builds import full_build  # noqa: F401 (a fixture)
from tests.hostile.untrusted_builds import honest, keys, mock_url, sheet  # noqa: F401 (fixtures)
