#version 460
// PhysicalStorageBuffer pointers from `--address`: two in the push constants (one to a buffer that
// holds a third), read through all three: o[i] = 4 * data[i] + table.scale.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430) readonly buffer Src { uint v[]; };
layout(buffer_reference, std430) buffer Table { Src src; uint scale; };
layout(push_constant) uniform P { Table table; Src direct; } p;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(std430, binding = 1) buffer Meta { Src through; uint pad0; uint pad1; };
layout(std430, binding = 2) buffer Out { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    o[i] = p.direct.v[i] * 3 + through.v[i] + p.table.scale;
}
