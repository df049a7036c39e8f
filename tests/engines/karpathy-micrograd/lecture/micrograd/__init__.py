"""An engine that follows the lecture's Value to the letter of its API: tanh and exp, no relu,
no reflected - or / (the karpathy-micrograd profile's lecture edition)."""
