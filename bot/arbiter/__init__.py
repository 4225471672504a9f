"""Everything between a detected deadlock and a validated verdict."""
