// Each thread normalises one row of an m×n matrix. The inner loop divides by the row
// norm on every iteration: a division inside a loop over the parameter n.
__global__ void row_normalize(const float *in, float *out, int m, int n)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
        float v = in[row * n + j];
        sum += v * v;
    }
    float norm = sqrtf(sum) + 1e-6f;
    for (int j = 0; j < n; ++j) {
        out[row * n + j] = in[row * n + j] / norm;
    }
}

// Integer histogram bucket: a loop with integer division and modulo.
__global__ void bucketize(const int *keys, int *bucket, int n, int width)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; ++k) {
        bucket[t * n + k] = keys[t * n + k] / width + keys[t * n + k] % 7;
    }
}
