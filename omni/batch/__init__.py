"""omni batch: many runs from a task file, on this machine or on a Ray cluster."""
