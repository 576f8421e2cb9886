"""Iterating over collections: trip counts come out in terms of len(parameter)."""


class WordStats:
    def __init__(self, words):
        self.words = words

    def histogram(self, words):
        """One pass over `words`: O(len(words)) dictionary updates."""
        counts = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        return counts

    def report(self, words, width):
        """String formatting with `%` is not a division; the line-by-line loop is len(words)."""
        lines = []
        for rank, w in enumerate(sorted(words)):
            lines.append("%3d %s" % (rank, w.ljust(width)))
        return "\n".join(lines)

    def shingles(self, words, k):
        """range(len(words) - k + 1) windows of k words each: O(len(words)·k)."""
        out = set()
        for start in range(len(words) - k + 1):
            out.add(" ".join(words[start + d] for d in range(k)))
        return out
