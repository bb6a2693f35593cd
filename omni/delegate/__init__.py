"""Delegating the change to another agent in the sandbox (Aider): the aider_edit tool, /aider, a spec's aider step."""
