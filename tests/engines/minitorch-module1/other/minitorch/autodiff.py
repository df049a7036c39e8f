"""The graph walk, written another way: the order comes from Kahn's algorithm (count each
variable's consumers, release a variable once all of them are placed) and the derivatives are
gathered in a defaultdict."""

from collections import defaultdict, deque


def central_difference(f, *vals, arg=0, epsilon=1e-6):
    def shifted(delta):
        return f(*(v + delta if i == arg else v for i, v in enumerate(vals)))

    return (shifted(epsilon) - shifted(-epsilon)) / (epsilon + epsilon)


class Variable:
    """Documentation only: the methods the walk uses (Scalar has them all)."""

    unique_id: int

    def is_leaf(self): ...

    def is_constant(self): ...

    @property
    def parents(self): ...

    def chain_rule(self, d_output): ...

    def accumulate_derivative(self, x): ...


def _tracked_parents(node):
    return [p for p in node.parents if not p.is_constant()]


def topological_sort(variable):
    if variable.is_constant():
        return []
    # first pass: every tracked variable reachable, and how many uses (edges) each one has
    uses = {variable.unique_id: 0}
    pending = [variable]
    while pending:
        node = pending.pop()
        for parent in _tracked_parents(node):
            if parent.unique_id not in uses:
                uses[parent.unique_id] = 0
                pending.append(parent)
            uses[parent.unique_id] += 1
    # second pass: a variable is placed once every use of it has been placed
    order = []
    ready = deque([variable])
    while ready:
        node = ready.popleft()
        order.append(node)
        for parent in _tracked_parents(node):
            uses[parent.unique_id] -= 1
            if uses[parent.unique_id] == 0:
                ready.append(parent)
    return order


def backpropagate(variable, deriv):
    totals = defaultdict(float)
    totals[variable.unique_id] += deriv
    for node in topological_sort(variable):
        here = totals[node.unique_id]
        if node.is_leaf():
            node.accumulate_derivative(here)
        else:
            for parent, part in node.chain_rule(here):
                if not parent.is_constant():
                    totals[parent.unique_id] += part


class Context:
    def __init__(self, no_grad=False, saved_values=()):
        self.no_grad = no_grad
        self.saved_values = tuple(saved_values)

    def save_for_backward(self, *values):
        if self.no_grad:
            return
        self.saved_values = values

    @property
    def saved_tensors(self):
        return self.saved_values
