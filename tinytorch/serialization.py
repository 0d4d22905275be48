def save(*a): pass
def load(*a): pass
def _rebuild(*a): pass
