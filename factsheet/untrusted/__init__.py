"""Input from someone else: the limits it is held to, confined and bounded reading, bounded parsing."""
