"""The stage: one component per layer page, answered by the server's route without a script run."""
