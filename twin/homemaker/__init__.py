"""HomeMaker, the home generator: seeded procedural homes, so that agents never train on one home.

`plan.py` draws a home's type, household, layout and devices and builds it; `household.py` draws
who lives there and their routine; `priors.py` reads what it draws from (`homemaker.yaml`);
`initial_state.py` sets the built home's states from the weather, the time and the household;
`population.py` counts how varied a population of planned homes is.
"""

from .plan import HomePlan, PlannedDevice, Room, build_home, load_priors, make_home, plan_home
from .population import PopulationSummary, summary

__all__ = [
    "HomePlan",
    "PlannedDevice",
    "PopulationSummary",
    "Room",
    "build_home",
    "load_priors",
    "make_home",
    "plan_home",
    "summary",
]
