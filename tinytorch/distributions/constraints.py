"""The constraints that distribution parameters and values are validated against (``torch.distributions.constraints``)."""


class Constraint:
    """A region of valid values: ``check(value)`` is a bool tensor, True where ``value`` lies inside.
    ``event_dim`` is the number of rightmost dims that make one value (0: elementwise)."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound, half_open=False):
        self.lower_bound, self.upper_bound, self.half_open = lower_bound, upper_bound, half_open

    def check(self, value):
        upper = value < self.upper_bound if self.half_open else value <= self.upper_bound
        return (self.lower_bound <= value) & upper

    def __repr__(self):
        name = "HalfOpenInterval" if self.half_open else "Interval"
        return f"{name}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Non-negative entries summing to 1 along the last dim."""

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    """Vectors of 0s and 1s with exactly one 1 along the last dim."""
    is_discrete = True

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Dependent(Constraint):
    """A constraint that depends on other parameters (checked by the distribution itself)."""

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


class _IndependentConstraint(Constraint):
    """``base`` with ``reinterpreted_batch_ndims`` more rightmost dims counted as one value (all must hold)."""

    def __init__(self, base, reinterpreted_batch_ndims):
        self.base, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete

    def check(self, value):
        ok = self.base.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok


def independent(base, reinterpreted_batch_ndims):
    return _IndependentConstraint(base, reinterpreted_batch_ndims)


real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
one_hot = _OneHot()
dependent = _Dependent()


def greater_than(lower_bound):
    return _GreaterThan(lower_bound)


def greater_than_eq(lower_bound):
    return _GreaterThanEq(lower_bound)


def interval(lower_bound, upper_bound):
    return _Interval(lower_bound, upper_bound)


def half_open_interval(lower_bound, upper_bound):
    return _Interval(lower_bound, upper_bound, half_open=True)


def integer_interval(lower_bound, upper_bound):
    return _IntegerInterval(lower_bound, upper_bound)
