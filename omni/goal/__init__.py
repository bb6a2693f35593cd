"""Reading the goal's English, once: omni/goal/reading.py (`read_goal`) and omni/goal/examples.py."""
