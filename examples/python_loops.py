"""Loop shapes ccls reads from CPython bytecode: each function's cost grows differently."""


def modular_checksum(n, m):
    """O(n·m): a `%` in the innermost loop is reported as division-in-loop."""
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i * j + 7) % 1_000_003
    return total


def pair_count(n):
    """O(n²/2): the inner range(i) depends on the outer index (a triangular nest)."""
    pairs = 0
    for i in range(n):
        for j in range(i):
            if (i ^ j) & 1:
                pairs += 1
    return pairs


def collatz_steps(x):
    """Unknown trip count: a while loop; ccls assumes the configured default and says so."""
    steps = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def squares(n):
    """A list comprehension: its loop is counted inside the function on every CPython version."""
    return [k * k for k in range(n)]


def index_of(items, n, key):
    """A `return` inside `range(n)` can leave early: (n + 1)/2 iterations on average, n at worst."""
    for i in range(n):
        if items[i] == key:
            return i
    return -1
