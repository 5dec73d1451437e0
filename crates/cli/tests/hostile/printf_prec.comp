#version 450
#extension GL_EXT_debug_printf : require
layout(local_size_x = 1) in;
void main() { debugPrintfEXT("%.70000f", 1.0); }
