#version 450
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint N = 16;
layout(std430, binding = 0) buffer B { uint b[]; };
shared uint s[N];
void main() { s[gl_LocalInvocationIndex % N] = 1u; barrier(); b[gl_LocalInvocationIndex] = s[0]; }
