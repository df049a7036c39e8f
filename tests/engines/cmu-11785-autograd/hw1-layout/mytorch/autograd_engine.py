"""The tape, walked from its last operation back to its first; a one-input operation's
backward answers with the array itself, as the handouts' do."""

from mytorch.utils import GradientBuffer


class Operation:
    def __init__(self, inputs, output, gradients_to_update, backward_operation):
        self.inputs = inputs
        self.output = output
        self.gradients_to_update = gradients_to_update
        self.backward_operation = backward_operation


class Autograd:
    def __init__(self):
        if getattr(self.__class__, "_has_instance", False):
            raise RuntimeError("Cannot create more than 1 Autograd instance")
        self.__class__._has_instance = True
        self.gradient_buffer = GradientBuffer()
        self.operation_list = []

    def __del__(self):
        self.__class__._has_instance = False

    def add_operation(self, inputs, output, gradients_to_update, backward_operation):
        if len(inputs) != len(gradients_to_update):
            raise Exception("Number of inputs must match the number of gradients to update!")
        for array, parameter in zip(inputs, gradients_to_update, strict=True):
            if parameter is None:
                self.gradient_buffer.add_spot(array)
        self.gradient_buffer.add_spot(output)
        self.operation_list.append(
            Operation(inputs, output, gradients_to_update, backward_operation)
        )

    def backward(self, divergence):
        last = len(self.operation_list) - 1
        for index in range(last, -1, -1):
            op = self.operation_list[index]
            upstream = divergence if index == last else self.gradient_buffer.get_param(op.output)
            grads = op.backward_operation(upstream, *op.inputs)
            if len(op.inputs) == 1:
                grads = [grads]
            for k, array in enumerate(op.inputs):
                if op.gradients_to_update[k] is not None:
                    op.gradients_to_update[k] += grads[k]
                else:
                    self.gradient_buffer.update_param(array, grads[k])

    def zero_grad(self):
        self.gradient_buffer.clear()
        self.operation_list = []
