"""A gradient buffer keyed by the address of an array's data, written here (not the handout's
GradientBuffer): every use of one array adds into one entry."""

import numpy as np


class GradientBuffer:
    def __init__(self):
        self.memory = {}

    @staticmethod
    def get_memory_loc(np_array):
        return np_array.__array_interface__["data"][0]

    def is_in_memory(self, np_array):
        return self.get_memory_loc(np_array) in self.memory

    def add_spot(self, np_array):
        self.memory.setdefault(self.get_memory_loc(np_array), np.zeros(np_array.shape))

    def update_param(self, np_array, gradient):
        if gradient is not None:  # a constant's (a mask's) gradient is None
            key = self.get_memory_loc(np_array)
            self.memory[key] = np.add(self.memory[key], gradient)

    def get_param(self, np_array):
        return self.memory[self.get_memory_loc(np_array)]

    def clear(self):
        self.memory = {}
