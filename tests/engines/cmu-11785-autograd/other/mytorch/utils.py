"""A gradient buffer written otherwise than the reference: np.add into the entry, a zero
entry made by zeros_like."""

import numpy as np


class GradientBuffer:
    def __init__(self):
        self.memory = {}

    def _get_memory_loc(self, np_array):
        return np_array.__array_interface__["data"][0]

    def is_in_memory(self, np_array):
        return self._get_memory_loc(np_array) in self.memory

    def add_spot(self, np_array):
        key = self._get_memory_loc(np_array)
        self.memory.setdefault(key, np.zeros_like(np_array, dtype=float))

    def update_param(self, np_array, gradient):
        key = self._get_memory_loc(np_array)
        self.memory[key] = np.add(self.memory[key], gradient)

    def get_param(self, np_array):
        return self.memory.get(self._get_memory_loc(np_array))

    def clear(self):
        self.memory = {}
