#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint b[]; };
uint big[1 << 28];
void main() { big[gl_LocalInvocationIndex * 4099] = 1u; b[0] = big[b[1]]; }
