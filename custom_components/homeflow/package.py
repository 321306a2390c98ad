"""The homeflow package (its twin and agent modules), on which the integration runs.

The release archive (scripts/release.py archive, the install for HA OS and Container) carries the
package under lib/, which goes first on sys.path, so the integration runs the code it was released
with; a Home Assistant Core venv may have the package installed instead. A plain copy of the
repository's folder has neither: then the modules that need it are not imported, and the config
flow aborts with what to install, where a failed import would show only a bare error."""

import importlib.util
import sys
from pathlib import Path

CARRIED = Path(__file__).parent / "lib"
if CARRIED.is_dir() and str(CARRIED) not in sys.path:
    sys.path.insert(0, str(CARRIED))

# The package's modules that Home Assistant's Python cannot import; none when it is there.
MISSING = [name for name in ("twin", "agent") if importlib.util.find_spec(name) is None]
# Where the install is documented, for the message that says how to fix it.
INSTALL_URL = "https://github.com/homeflow/homeflow#install"
