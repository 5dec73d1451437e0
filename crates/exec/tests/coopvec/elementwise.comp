#version 460
// Everything a cooperative vector does besides products: loads and stores at byte offsets,
// construction, component access, arithmetic, bit operations, conversions and the GLSL.std.450
// functions GL_NV_cooperative_vector allows. Each invocation writes N floats per result.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
const int N = 12;
layout(std430, binding = 0) readonly buffer In { float a[]; };
layout(std430, binding = 1) buffer Out { float r[]; };
layout(std430, binding = 2) buffer OutI { uint ri[]; };
shared float stage[32 * 16];

void put(uint slot, coopvecNV<float, N> v) {
    coopVecStoreNV(v, r, (gl_LocalInvocationIndex * 16 + slot) * N * 4);
}

void main() {
    uint i = gl_LocalInvocationIndex;
    coopvecNV<float, N> x, y;
    coopVecLoadNV(x, a, i * 2 * N * 4);
    coopVecLoadNV(y, a, (i * 2 + 1) * N * 4);
    put(0, x + y);
    put(1, x - y);
    put(2, x * y);
    put(3, x / y);
    put(4, -x);
    put(5, x * 3.0);
    put(6, max(x, y));
    put(7, min(x, coopvecNV<float, N>(0.25)));
    put(8, clamp(x, coopvecNV<float, N>(-0.5), coopvecNV<float, N>(0.5)));
    put(9, step(y, x));
    put(10, exp(x) + log(y * y + coopvecNV<float, N>(1.0)));
    put(11, tanh(x) + atan(y));
    put(12, fma(x, y, x));
    // Component access, length() and a round trip through shared memory and f16.
    coopvecNV<float, N> z;
    for (int k = 0; k < z.length(); ++k) z[k] = float(k) * x[N - 1 - k];
    put(13, z);
    coopVecStoreNV(x, stage, i * 16 * 4);
    barrier();
    coopvecNV<float, N> w;
    coopVecLoadNV(w, stage, ((i + 1) % 32) * 16 * 4);
    put(14, w);
    coopvecNV<float16_t, N> h = coopvecNV<float16_t, N>(x);
    put(15, coopvecNV<float, N>(h));
    // Integer vectors: conversions, bit operations and shifts.
    coopvecNV<int32_t, N> xi = coopvecNV<int32_t, N>(x * 1000.0);
    coopvecNV<uint32_t, N> u = coopvecNV<uint32_t, N>(xi);
    u = ((u << coopvecNV<uint32_t, N>(3)) ^ (u >> coopvecNV<uint32_t, N>(2))) | (u & coopvecNV<uint32_t, N>(0xf0));
    u = ~u + coopvecNV<uint32_t, N>(i);
    coopVecStoreNV(u, ri, i * N * 4 * 2);
    coopvecNV<int32_t, N> s = xi >> coopvecNV<int32_t, N>(3);
    s = s / coopvecNV<int32_t, N>(7) - xi * coopvecNV<int32_t, N>(2);
    coopVecStoreNV(s, ri, (i * 2 + 1) * N * 4);
}
