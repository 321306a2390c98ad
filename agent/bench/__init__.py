"""SmartHome-Bench: the paper's five task types, over homes and users that the flywheel never
trains on."""
