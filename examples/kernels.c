/* C kernels showing what Big-O hides: same O(n) or O(n^2), very different cost. */
#include <stddef.h>

/* O(n): one modulo per element with a divisor only known at run time. */
long checksum_mod(const long *a, long n, long m) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] % m;
    return s;
}

/* O(n): the same loop with an addition instead — a fraction of the cost. */
long checksum_add(const long *a, long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i];
    return s;
}

/* O(n^2), row-major: walks memory contiguously. */
double sum_rows(const double *m, long n) {
    double s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            s += m[i * n + j];
    return s;
}

/* O(n^2), column-major: the same work, a cache miss per element for large n. */
double sum_cols(const double *m, long n) {
    double s = 0;
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++)
            s += m[i * n + j];
    return s;
}

/* Triangular nest: n^2/2 iterations; division by a loop-invariant value. */
void scale_lower(double *m, long n, double d) {
    for (long i = 0; i < n; i++)
        for (long j = 0; j < i; j++)
            m[i * n + j] = m[i * n + j] / d;
}

/* Unknown trip count: the loop stops at a value only known at run time. */
long find_first(const int *a, int key) {
    long i = 0;
    while (a[i] != key)
        i++;
    return i;
}

/* Early exit within a bound: the search leaves when it finds the key. ccls takes the mean exit,
   (n + 1)/2 iterations (--early-exit worst: n), and says so. */
long index_of(const long *a, long n, long key) {
    for (long i = 0; i < n; i++)
        if (a[i] == key)
            return i;
    return -1;
}
