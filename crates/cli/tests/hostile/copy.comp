#version 450
layout(local_size_x = 6) in;
layout(std430, binding = 0) readonly buffer In { uint a[]; };
layout(std430, binding = 1) buffer Out { uint b[]; };
void main() { b[gl_LocalInvocationIndex] = a[gl_LocalInvocationIndex]; }
