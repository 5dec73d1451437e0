#version 450
// Reads and writes memory only through device addresses taken from push constants (ggml's
// im2col_*_bda shaders do the same); binding 0 is an ordinary buffer.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant) uniform Push { Floats src; uint64_t dst; } pc;
layout(std430, binding = 0) buffer Marks { uint marks[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    Floats(pc.dst).v[i] = pc.src.v[i] * 2.0 + 1.0;
    marks[i] = i;
}
