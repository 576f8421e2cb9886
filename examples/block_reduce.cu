// Shared-memory tree reduction of half-precision inputs: one partial sum per block.
#include <cuda_fp16.h>

#define BLOCK 256

__global__ void block_reduce(const __half *in, float *partial, int n)
{
    __shared__ float buf[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * BLOCK + tid;
    buf[tid] = (i < n) ? __half2float(in[i]) : 0.0f;
    __syncthreads();
    #pragma unroll 1  // keep the loop: 8 iterations of s >>= 1, not 8 unrolled copies
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(partial, buf[0]);
}

// Packed half2 axpy: two lanes per instruction.
__global__ void haxpy2(int n, __half2 a, const __half2 *x, __half2 *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma2(a, x[i], y[i]);
}
