"""The data flywheel (paper 3.3, appendix B): profiles, blueprints, the user simulator and
MCTS-Flow, which make verified multi-turn trajectories for training."""
