"""Training on the flywheel's data: SFT on verified trajectories (sft), then step-wise RL."""
