from stats import mean, spread


def summary(values):
    return f"mean {mean(values):.1f}, spread {spread(values)}"
