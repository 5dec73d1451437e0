#version 450
// Arithmetic-heavy kernel for lane-instructions/s: a long dependent chain of integer and float
// ops per invocation, no memory traffic inside the loop.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer B { uint u[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = i * 2654435761u;
    float f = float(i) * 0.001;
    for (uint k = 0u; k < 1000u; k++) {
        x = (x ^ (x >> 13u)) * 0x5bd1e995u + k;
        f = f * 0.999 + float(x & 255u) * 0.0001;
    }
    u[i] = x + floatBitsToUint(f);
}
