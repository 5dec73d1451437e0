#version 450
layout(local_size_x = 1) in;
struct S { uint v[128]; };
layout(std430, binding = 0) buffer Victim { uint victim[]; };
layout(std430, binding = 1) buffer Target { S t[]; };
layout(push_constant) uniform P { int i; int j; } pc;
void main() { t[pc.i].v[pc.j] = 0xdeadbeefu; }
