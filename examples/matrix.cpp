// C++: a template and a class method, so names are demangled and qualified.
#include <cstddef>
#include <vector>

namespace linalg {

template <typename T>
T dot(const T *x, const T *y, std::size_t n) {
    T s{};
    for (std::size_t i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

struct Matrix {
    std::size_t n;
    double *data;

    // Naive i-j-k product: the inner loop strides through `b` by a whole row.
    void multiply(const Matrix &b, Matrix &out) const {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                double s = 0;
                for (std::size_t k = 0; k < n; ++k)
                    s += data[i * n + k] * b.data[k * n + j];
                out.data[i * n + j] = s;
            }
    }
};

double dot_double(const double *x, const double *y, std::size_t n) { return dot(x, y, n); }

}  // namespace linalg
